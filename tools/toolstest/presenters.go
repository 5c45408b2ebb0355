package toolstest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/dsh-acp/dsh-acp/tools"
)

// maxReported caps the presenter failures reported per tool, so one bug
// does not bury the output.
const maxReported = 10

func checkPresenters(tool tools.Tool, cfg Config) []error {
	if tool.PresentCall == nil && tool.PresentResult == nil && tool.PresentStart == nil {
		return nil
	}
	g := newGen(tool.Parameters, cfg.Seed)
	var argsList []json.RawMessage
	argsList = append(argsList, cfg.Samples...)
	for _, s := range notObjects {
		argsList = append(argsList, json.RawMessage(s))
	}
	argsList = append(argsList, json.RawMessage(""), json.RawMessage("{}"))
	for i := range cfg.Rounds {
		if len(cfg.Samples) > 0 && i%2 == 0 {
			argsList = append(argsList, g.mutate(cfg.Samples[g.pick(len(cfg.Samples))]))
		} else {
			argsList = append(argsList, g.args())
		}
	}
	var errs []error
	report := func(err error) bool {
		errs = append(errs, err)
		return len(errs) < maxReported
	}
	if tool.PresentCall != nil {
		for _, args := range argsList {
			if err := checkCall(tool, args); err != nil && !report(fmt.Errorf("PresentCall(%s): %w", args, err)) {
				return errs
			}
		}
	}
	if tool.PresentStart != nil {
		// The members a stream gives: the prefixes of every argument
		// list, cut anywhere, as tools.PartialArgs reads them.
		for _, args := range argsList {
			for _, cut := range []int{len(args) / 3, len(args) / 2, len(args) - 1, len(args)} {
				partial := tools.PartialArgs(string(args[:max(cut, 0)]))
				if err := checkStart(tool, partial); err != nil && !report(fmt.Errorf("PresentStart(%s): %w", partial, err)) {
					return errs
				}
			}
		}
	}
	if tool.PresentResult != nil {
		var pairs [][2]int // indexes into argsList and results
		results := slices.Clone(cfg.Results)
		for i := range len(cfg.Samples) {
			for j := range len(cfg.Results) {
				pairs = append(pairs, [2]int{i, j})
			}
		}
		for range cfg.Rounds {
			results = append(results, g.resultInput())
			pairs = append(pairs, [2]int{g.pick(len(argsList)), len(results) - 1})
		}
		for _, p := range pairs {
			args, r := argsList[p[0]], results[p[1]]
			if err := checkResult(tool, args, r); err != nil && !report(fmt.Errorf("PresentResult(%s, %+v): %w", args, r, err)) {
				return errs
			}
		}
	}
	return errs
}

// checkCall calls PresentCall twice on a private copy of args.
func checkCall(tool tools.Tool, args json.RawMessage) error {
	mine := bytes.Clone(args)
	first, err := callOnce(func() any { return tool.PresentCall(mine) })
	if err != nil {
		return err
	}
	if !bytes.Equal(mine, args) {
		return errors.New("modified its arguments")
	}
	second, err := callOnce(func() any { return tool.PresentCall(mine) })
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(first, second) {
		return fmt.Errorf("not pure: %#v, then %#v", first, second)
	}
	if first == nil {
		return nil
	}
	return checkCallView(first.(tools.ToolCallView))
}

// checkStart calls PresentStart twice on a private copy of partial.
func checkStart(tool tools.Tool, partial json.RawMessage) error {
	mine := bytes.Clone(partial)
	first, err := callOnce(func() any { return tool.PresentStart(mine) })
	if err != nil {
		return err
	}
	second, err := callOnce(func() any { return tool.PresentStart(mine) })
	if err != nil {
		return err
	}
	if !bytes.Equal(mine, partial) {
		return errors.New("modified its arguments")
	}
	if !reflect.DeepEqual(first, second) {
		return fmt.Errorf("not pure: %#v, then %#v", first, second)
	}
	if first == nil {
		return nil
	}
	return checkCallView(first.(tools.ToolCallView))
}

// checkResult calls PresentResult twice on private copies of its inputs.
func checkResult(tool tools.Tool, args json.RawMessage, r tools.ResultInput) error {
	mine, myR := bytes.Clone(args), cloneResult(r)
	first, err := callOnce(func() any { return tool.PresentResult(mine, myR) })
	if err != nil {
		return err
	}
	if !bytes.Equal(mine, args) || !reflect.DeepEqual(myR, r) {
		return errors.New("modified its inputs")
	}
	second, err := callOnce(func() any { return tool.PresentResult(mine, cloneResult(r)) })
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(first, second) {
		return fmt.Errorf("not pure: %#v, then %#v", first, second)
	}
	if first == nil {
		return nil
	}
	return checkResultView(first.(tools.ToolResultView))
}

// callOnce runs f, turning a panic into an error. A nil interface result
// (untyped nil view) is returned as nil.
func callOnce(f func() any) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panicked: %v", p)
		}
	}()
	v = f()
	if v == nil || reflect.ValueOf(v).Kind() == reflect.Pointer && reflect.ValueOf(v).IsNil() {
		if v != nil {
			return nil, fmt.Errorf("returned a nil %T instead of a nil view", v)
		}
		return nil, nil
	}
	return v, nil
}

func cloneResult(r tools.ResultInput) tools.ResultInput {
	out := r
	if r.Content != nil {
		out.Content = slices.Clone(r.Content)
	}
	if r.Meta != nil {
		out.Meta = bytes.Clone(r.Meta)
	}
	return out
}

func checkCallView(v tools.ToolCallView) error {
	switch x := v.(type) {
	case tools.GenericCall:
		if x.Kind != "" && !x.Kind.Valid() {
			return fmt.Errorf("GenericCall.Kind %q is not a known kind", x.Kind)
		}
		if x.RawInput != nil && !json.Valid(x.RawInput) {
			return fmt.Errorf("GenericCall.RawInput %q is not JSON", x.RawInput)
		}
		return errors.Join(checkContent(x.Content), checkLocations(x.Locations))
	case tools.TerminalCall:
		return nil
	case tools.DiffCall:
		return errors.Join(checkDiffs(x.Diffs), checkLocations(x.Locations))
	}
	return fmt.Errorf("returned %T, not a GenericCall, TerminalCall or DiffCall value", v)
}

func checkResultView(v tools.ToolResultView) error {
	switch x := v.(type) {
	case tools.GenericResult:
		return errors.Join(checkContent(x.Content), checkLocations(x.Locations))
	case tools.TerminalResult:
		if x.ExitCode != nil && x.Signal != "" {
			return fmt.Errorf("TerminalResult has both exit code %d and signal %q", *x.ExitCode, x.Signal)
		}
		return nil
	case tools.DiffResult:
		return errors.Join(checkDiffs(x.Diffs), checkLocations(x.Locations))
	}
	return fmt.Errorf("returned %T, not a GenericResult, TerminalResult or DiffResult value", v)
}

func checkContent(content []tools.Content) error {
	for i, c := range content {
		if c.Type == "" {
			return fmt.Errorf("content[%d] has no type", i)
		}
	}
	return nil
}

func checkLocations(locs []tools.FileLocation) error {
	for i, l := range locs {
		if l.Path == "" {
			return fmt.Errorf("locations[%d] has no path", i)
		}
		if l.Line < 0 {
			return fmt.Errorf("locations[%d].line %d is negative (lines are 1-based, 0 for none)", i, l.Line)
		}
	}
	return nil
}

func checkDiffs(diffs []tools.FileDiff) error {
	for i, d := range diffs {
		if d.Path == "" {
			return fmt.Errorf("diffs[%d] has no path", i)
		}
	}
	return nil
}
