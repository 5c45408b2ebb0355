package toolstest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// namePattern is what OpenAI-compatible APIs accept as a function name.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func checkDefinition(tool tools.Tool, _ Config) []error {
	var errs []error
	if !namePattern.MatchString(tool.Name) {
		errs = append(errs, fmt.Errorf("name %q does not match %s", tool.Name, namePattern))
	}
	if strings.TrimSpace(tool.Description) == "" {
		errs = append(errs, errors.New("description is empty"))
	}
	if tool.Execute == nil {
		errs = append(errs, errors.New("tool.Execute is nil"))
	}
	if spec, ok := tool.Spec(); ok {
		if err := spec.Check(); err != nil {
			errs = append(errs, err)
		} else if !bytes.Equal(spec.JSONSchema(), tool.Parameters) {
			errs = append(errs, fmt.Errorf("tool.Parameters %s differ from the Spec's schema %s", tool.Parameters, spec.JSONSchema()))
		}
	}
	return errs
}

func checkSchema(tool tools.Tool, _ Config) []error {
	var params any
	if err := json.Unmarshal(tool.Parameters, &params); err != nil {
		return []error{fmt.Errorf("tool.Parameters are not JSON: %w", err)}
	}
	obj, ok := params.(map[string]any)
	if !ok || obj["type"] != "object" {
		return []error{fmt.Errorf(`tool.Parameters %s are not a JSON object with "type":"object"`, tool.Parameters)}
	}
	var errs []error
	if p, present := obj["properties"]; present {
		if _, ok := p.(map[string]any); !ok {
			errs = append(errs, errors.New(`the "properties" of tool.Parameters is not an object`))
		}
	}
	reg := tools.NewRegistry()
	if err := reg.Register(tool); err != nil {
		return append(errs, fmt.Errorf("register: %w", err))
	}
	schemas := reg.Schemas()
	if len(schemas) != 1 {
		return append(errs, fmt.Errorf("registry.Schemas() gave %d entries, want 1", len(schemas)))
	}
	raw, err := json.Marshal(schemas[0])
	if err != nil {
		return append(errs, fmt.Errorf("marshal Schema: %w", err))
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return append(errs, fmt.Errorf("the model-facing schema is not a JSON object: %w", err))
	}
	want := []string{"description", "name", "parameters"}
	if tool.Strict != nil {
		want = append(want, "strict")
	}
	got := make([]string, 0, len(keys))
	for k := range keys {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		errs = append(errs, fmt.Errorf("model-facing schema keys %v, want %v", got, want))
	}
	return errs
}

// notObjects are argument texts that are not a JSON object.
var notObjects = []string{"[]", `[{"a":1}]`, `"text"`, "42", "null", "true", "{", `{"a":`, `{"a":1} x`, "\xff"}

func checkInvalidArgs(tool tools.Tool, cfg Config) []error {
	reg := tools.NewRegistry()
	if err := reg.Register(tool); err != nil {
		return []error{fmt.Errorf("register: %w", err)}
	}
	cases := slices.Clone(notObjects)
	g := newGen(tool.Parameters, cfg.Seed)
	cases = append(cases, g.invalidArgs()...)
	var errs []error
	for i, args := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		callID := fmt.Sprintf("conformance-%d", i)
		res := reg.Execute(ctx, &tools.Exec{CallID: callID, Name: tool.Name, Args: json.RawMessage(args)})
		cancel()
		if err := checkArgsErrorResult(res, callID); err != nil {
			errs = append(errs, fmt.Errorf("arguments %q: %w", args, err))
		}
	}
	return errs
}

func checkArgsErrorResult(res tools.Result, callID string) error {
	switch {
	case !res.IsError:
		return errors.New("not an error result")
	case res.CallID != callID:
		return fmt.Errorf("callId %q, want %q", res.CallID, callID)
	case len(res.Content) != 1 || res.Content[0].Type != "text":
		return fmt.Errorf("content %+v, want one text block", res.Content)
	case !strings.HasPrefix(res.Content[0].Text, "Error: invalid arguments: ") || len(res.Content[0].Text) <= len("Error: invalid arguments: "):
		return fmt.Errorf("text %q, want \"Error: invalid arguments: <violations>\"", res.Content[0].Text)
	case res.Error == nil || res.Error.Code != tools.CodeInvalidArgs || res.Error.Name != tools.NameToolArgs:
		return fmt.Errorf("error info %+v, want {ToolArgsError INVALID_ARGS}", res.Error)
	case res.Meta != nil:
		return fmt.Errorf("error result carries meta %s", res.Meta)
	}
	return nil
}

func checkPreview(tool tools.Tool, _ Config) []error {
	if tool.Preview == nil {
		return nil
	}
	var errs []error
	for _, args := range notObjects {
		view, panicked, err := callPreview(tool, json.RawMessage(args))
		switch {
		case panicked != nil:
			errs = append(errs, fmt.Errorf("arguments %q: Preview panicked: %v", args, panicked))
		case view != nil && err == nil:
			errs = append(errs, fmt.Errorf("arguments %q: Preview returned a view for arguments that are not an object", args))
		case err != nil && view != nil:
			errs = append(errs, fmt.Errorf("arguments %q: Preview returned both a view and an error", args))
		}
	}
	return errs
}

// callPreview calls tool.Preview, turning a panic into panicked (the
// recovered value) instead of crashing the conformance run.
func callPreview(tool tools.Tool, args json.RawMessage) (view tools.ToolCallView, panicked any, err error) {
	defer func() {
		if v := recover(); v != nil {
			panicked = v
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	view, err = tool.Preview(ctx, &tools.Exec{CallID: "conformance-preview", Name: tool.Name, Args: args})
	return view, nil, err
}
