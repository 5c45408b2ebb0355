package acp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaDoc is the $defs of one of the SDK's schema files.
type schemaDoc map[string]map[string]any

func loadDefs(t *testing.T, file string) schemaDoc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(sdkSchemaPath(t)), file))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs schemaDoc `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Defs
}

// props collects the property names a definition allows (through allOf,
// anyOf, oneOf and $ref) and the ones it requires at its top level.
func (d schemaDoc) props(def string) (allowed, required map[string]bool) {
	allowed, required = map[string]bool{}, map[string]bool{}
	var walk func(m map[string]any, top bool)
	walk = func(m map[string]any, top bool) {
		if ref, ok := m["$ref"].(string); ok {
			if sub := d[strings.TrimPrefix(ref, "#/$defs/")]; sub != nil {
				walk(sub, top)
			}
		}
		if p, ok := m["properties"].(map[string]any); ok {
			for k := range p {
				allowed[k] = true
			}
		}
		if top {
			if r, ok := m["required"].([]any); ok {
				for _, k := range r {
					required[k.(string)] = true
				}
			}
		}
		for _, key := range []string{"allOf", "anyOf", "oneOf"} {
			list, _ := m[key].([]any)
			for _, sub := range list {
				if sm, ok := sub.(map[string]any); ok {
					// allOf parts are required too; alternatives are not.
					walk(sm, top && key == "allOf")
				}
			}
		}
	}
	if m := d[def]; m != nil {
		walk(m, true)
	}
	return allowed, required
}

// jsonNames is the JSON member names of a struct type's fields.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// TestTypesMatchSchema: every JSON member of the plain struct types is a
// property of the schema type it mirrors (the stable schema, or the
// unstable one for what only it has), and every property the schema
// requires is a member. The types with their own MarshalJSON are checked
// by TestSamplesMatchSchema.
func TestTypesMatchSchema(t *testing.T) {
	stable, unstable := loadDefs(t, "schema.json"), loadDefs(t, "schema.unstable.json")
	types := map[string]any{
		"Implementation": Implementation{}, "Annotations": Annotations{}, "EmbeddedResource": EmbeddedResource{},
		"ToolCallLocation": ToolCallLocation{}, "PlanEntry": PlanEntry{}, "AvailableCommand": AvailableCommand{},
		"UnstructuredCommandInput": UnstructuredInputHint{}, "Content": Content{}, "Diff": Diff{}, "Terminal": Terminal{},
		"FileSystemCapabilities": FileSystemCapabilities{}, "ClientCapabilities": ClientCapabilities{},
		"ClientSessionCapabilities": ClientSessionCapabilities{}, "SessionConfigOptionsCapabilities": SessionConfigOptionsCapabilities{},
		"AuthCapabilities": AuthCapabilities{}, "ElicitationCapabilities": ElicitationCapabilities{},
		"PromptCapabilities": PromptCapabilities{}, "McpCapabilities": McpCapabilities{},
		"SessionCapabilities": SessionCapabilities{}, "AgentAuthCapabilities": AgentAuthCapabilities{}, "AgentCapabilities": AgentCapabilities{},
		"InitializeRequest": InitializeRequest{}, "InitializeResponse": InitializeResponse{},
		"AuthenticateRequest": AuthenticateRequest{}, "AuthenticateResponse": AuthenticateResponse{},
		"LogoutRequest": LogoutRequest{}, "LogoutResponse": LogoutResponse{}, "EnvVariable": EnvVariable{}, "HttpHeader": HTTPHeader{},
		"NewSessionRequest": NewSessionRequest{}, "NewSessionResponse": NewSessionResponse{},
		"SessionMode": SessionMode{}, "SessionModeState": SessionModeState{},
		"PromptRequest": PromptRequest{}, "PromptResponse": PromptResponse{}, "Usage": Usage{}, "CancelNotification": CancelNotification{},
		"LoadSessionRequest": LoadSessionRequest{}, "LoadSessionResponse": LoadSessionResponse{},
		"ListSessionsRequest": ListSessionsRequest{}, "ListSessionsResponse": ListSessionsResponse{}, "SessionInfo": SessionInfo{},
		"CloseSessionRequest": CloseSessionRequest{}, "CloseSessionResponse": CloseSessionResponse{},
		"SetSessionModeRequest": SetSessionModeRequest{}, "SetSessionModeResponse": SetSessionModeResponse{},
		"ResumeSessionRequest": ResumeSessionRequest{}, "ResumeSessionResponse": ResumeSessionResponse{},
		"DeleteSessionRequest": DeleteSessionRequest{}, "DeleteSessionResponse": DeleteSessionResponse{},
		"ForkSessionRequest": ForkSessionRequest{}, "ForkSessionResponse": ForkSessionResponse{},
		"SetSessionConfigOptionResponse": SetSessionConfigOptionResponse{},
		"SessionConfigSelectOption":      SessionConfigSelectOption{}, "SessionConfigSelectGroup": SessionConfigSelectGroup{},
		"CancelRequestNotification": CancelRequestNotification{},
		"PermissionOption":          PermissionOption{}, "RequestPermissionRequest": RequestPermissionRequest{},
		"RequestPermissionOutcome": PermissionOutcome{}, "RequestPermissionResponse": RequestPermissionResponse{},
		"ReadTextFileRequest": ReadTextFileRequest{}, "ReadTextFileResponse": ReadTextFileResponse{},
		"WriteTextFileRequest": WriteTextFileRequest{}, "WriteTextFileResponse": WriteTextFileResponse{},
		"CreateElicitationRequest": CreateElicitationRequest{}, "ElicitationSchema": ElicitationSchema{},
		"ElicitationPropertySchema": ElicitationPropertySchema{}, "EnumOption": EnumOption{}, "MultiSelectItems": MultiSelect{},
		"CreateElicitationResponse": CreateElicitationResponse{}, "CompleteElicitationNotification": CompleteElicitationNotification{},
		"ContentChunk": ContentChunk{}, "ToolCall": ToolCall{}, "ToolCallUpdate": ToolCallUpdate{}, "Plan": Plan{},
		"AvailableCommandsUpdate": AvailableCommandsUpdate{}, "CurrentModeUpdate": CurrentModeUpdate{},
		"ConfigOptionUpdate": ConfigOptionUpdate{}, "SessionInfoUpdate": SessionInfoUpdate{}, "UsageUpdate": UsageUpdate{},
		"Cost": Cost{}, "Notice": Notice{}, "CompactionUpdate": CompactionUpdate{}, "CompactionSummaryChunk": CompactionSummaryChunk{},
	}
	// Members the schema gives through the union a type is a variant of
	// (the discriminators, written by the tag fields).
	extra := map[string]string{"Content": "type", "Diff": "type", "Terminal": "type"}
	for def, v := range types {
		allowed, required := stable.props(def)
		if def == "EmbeddedResource" {
			// Text or blob contents: the members of both, the
			// requirements of both but the one that tells them apart.
			var blob map[string]bool
			allowed, required = stable.props("TextResourceContents")
			blob, _ = stable.props("BlobResourceContents")
			for k := range blob {
				allowed[k] = true
			}
			delete(required, "text")
		}
		if stable[def] == nil && def != "EmbeddedResource" {
			allowed, required = unstable.props(def)
		}
		if x := extra[def]; x != "" {
			allowed[x] = true
		}
		unstableAllowed, _ := unstable.props(def)
		if len(allowed) == 0 && len(unstableAllowed) == 0 {
			t.Errorf("%s: no such schema type", def)
			continue
		}
		names := jsonNames(reflect.TypeOf(v))
		have := map[string]bool{}
		for _, n := range names {
			have[n] = true
			if !allowed[n] && !unstableAllowed[n] {
				t.Errorf("%s: member %q is not in the schema (allowed: %v)", def, n, keys(allowed))
			}
		}
		for r := range required {
			if !have[r] {
				t.Errorf("%s: the schema requires %q, the Go type has %v", def, r, names)
			}
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestSamplesMatchSchema: values of the types the agent writes, the
// unions with their own MarshalJSON included, are valid instances of
// their schema types; each decodes back to the same JSON.
func TestSamplesMatchSchema(t *testing.T) {
	yes, exit := true, uint64(3)
	cat := CategoryModel
	selectOpt := SessionConfigOption{ID: "model", Name: "Model", Category: cat, Select: &SessionConfigSelect{CurrentValue: "fast",
		Options: []SessionConfigSelectOption{{Value: "fast", Name: "Fast"}, {Value: "deep", Name: "Deep", Description: "slower"}}}}
	grouped := SessionConfigOption{ID: "effort", Name: "Effort", Select: &SessionConfigSelect{CurrentValue: "hi",
		Groups: []SessionConfigSelectGroup{{Group: "g", Name: "Levels", Options: []SessionConfigSelectOption{{Value: "hi", Name: "High"}}}}}}
	boolOpt := SessionConfigOption{ID: "web", Name: "Web search", Description: "d", Boolean: &SessionConfigBoolean{CurrentValue: true}}
	modes := &SessionModeState{CurrentModeID: "plan", AvailableModes: []SessionMode{{ID: "plan", Name: "Plan"}}}
	samples := []struct {
		def, file string
		v         any
		decode    any // a pointer to decode into, nil to skip
	}{
		{"InitializeResponse", "", InitializeResponse{ProtocolVersion: 1, AgentInfo: &Implementation{Name: "a", Version: "1"},
			AuthMethods: []AuthMethod{{ID: "login", Name: "Log in"}, {Type: AuthTerminal, ID: "t", Name: "Terminal", Args: []string{"login"}, Env: map[string]string{"A": "1"}}},
			AgentCapabilities: AgentCapabilities{LoadSession: true, McpCapabilities: &McpCapabilities{HTTP: true},
				SessionCapabilities: &SessionCapabilities{List: &Empty{}, Delete: &Empty{}, Resume: &Empty{}, Close: &Empty{}, Fork: &Empty{}},
				Auth:                &AgentAuthCapabilities{Logout: &Empty{}}}}, new(InitializeResponse)},
		{"NewSessionResponse", "", NewSessionResponse{SessionID: "s", Modes: modes, ConfigOptions: []SessionConfigOption{selectOpt, grouped, boolOpt}}, new(NewSessionResponse)},
		{"LoadSessionResponse", "", LoadSessionResponse{Modes: modes, ConfigOptions: []SessionConfigOption{selectOpt}}, new(LoadSessionResponse)},
		{"ResumeSessionResponse", "", ResumeSessionResponse{ConfigOptions: []SessionConfigOption{boolOpt}}, new(ResumeSessionResponse)},
		{"ForkSessionResponse", "schema.unstable.json", ForkSessionResponse{SessionID: "s2", Modes: modes}, new(ForkSessionResponse)},
		{"SetSessionConfigOptionResponse", "", SetSessionConfigOptionResponse{ConfigOptions: []SessionConfigOption{selectOpt, boolOpt}}, new(SetSessionConfigOptionResponse)},
		{"ListSessionsResponse", "", ListSessionsResponse{Sessions: []SessionInfo{{SessionID: "s", Cwd: "/p", Title: "t", UpdatedAt: "2026-01-01T00:00:00.000Z"}}, NextCursor: "c"}, new(ListSessionsResponse)},
		{"PromptResponse", "", PromptResponse{StopReason: StopEndTurn}, new(PromptResponse)},
		{"PromptResponse", "schema.unstable.json", PromptResponse{StopReason: StopCancelled, Usage: &Usage{TotalTokens: 10, InputTokens: 7, OutputTokens: 3, ThoughtTokens: &exit}}, new(PromptResponse)},
		{"SetSessionConfigOptionRequest", "", SetSessionConfigOptionRequest{SessionID: "s", ConfigID: "model", ValueID: "fast"}, new(SetSessionConfigOptionRequest)},
		{"SetSessionConfigOptionRequest", "", SetSessionConfigOptionRequest{SessionID: "s", ConfigID: "web", Boolean: &yes}, new(SetSessionConfigOptionRequest)},
		{"McpServer", "", McpServer{Name: "fs", Command: "mcp-fs", Args: []string{"--root", "/"}}, new(McpServer)},
		{"McpServer", "", McpServer{Type: McpHTTP, Name: "web", URL: "https://x", Headers: []HTTPHeader{{Name: "A", Value: "b"}}}, new(McpServer)},
		{"McpServer", "", McpServer{Type: McpSSE, Name: "sse", URL: "https://y"}, new(McpServer)},
		{"RequestPermissionRequest", "", RequestPermissionRequest{SessionID: "s", ToolCall: ToolCallUpdate{ToolCallID: "c", Content: []ToolCallContent{TextContent("x"), Diff{Path: "/a", NewText: ""}, Terminal{TerminalID: "c"}}},
			Options: []PermissionOption{{OptionID: "a", Name: "Allow", Kind: AllowOnce}}}, new(RequestPermissionRequest)},
		{"ReadTextFileRequest", "", ReadTextFileRequest{SessionID: "s", Path: "/a"}, new(ReadTextFileRequest)},
		{"WriteTextFileRequest", "", WriteTextFileRequest{SessionID: "s", Path: "/a", Content: ""}, new(WriteTextFileRequest)},
		{"CreateElicitationRequest", "", CreateElicitationRequest{Mode: ElicitForm, Message: "Which?", SessionID: "s", RequestedSchema: &ElicitationSchema{Type: "object",
			Properties: map[string]ElicitationPropertySchema{"name": {Type: "string", Title: "Name"}, "n": {Type: "integer", Minimum: "1"},
				"tags": {Type: "array", Items: &MultiSelect{Type: "string", Enum: []string{"a", "b"}}}},
			Required: []string{"name"}}}, new(CreateElicitationRequest)},
		{"CreateElicitationRequest", "", CreateElicitationRequest{Mode: ElicitURL, Message: "Log in", RequestID: json.RawMessage(`7`), ElicitationID: "e1", URL: "https://x/login"}, new(CreateElicitationRequest)},
		{"CreateElicitationResponse", "", CreateElicitationResponse{Action: ElicitAccept, Content: map[string]any{"name": "x"}}, new(CreateElicitationResponse)},
		{"CompleteElicitationNotification", "", CompleteElicitationNotification{ElicitationID: "e1"}, new(CompleteElicitationNotification)},
		{"ContentBlock", "", ContentBlock{Type: BlockResourceLink, URI: "file:///a", Name: "a"}, new(ContentBlock)},
		{"ContentBlock", "", ContentBlock{Type: BlockText, Text: ""}, new(ContentBlock)},
	}
	compiled := map[string]*jsonschema.Schema{}
	for _, s := range samples {
		file := s.file
		if file == "" {
			file = "schema.json"
		}
		key := file + "#" + s.def
		if compiled[key] == nil {
			compiled[key] = compileDef(t, file, s.def)
		}
		b, err := json.Marshal(s.v)
		if err != nil {
			t.Fatalf("%s: %v", s.def, err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := compiled[key].Validate(inst); err != nil {
			t.Errorf("%s: %v\n%s", s.def, err, b)
		}
		if s.decode != nil {
			if err := json.Unmarshal(b, s.decode); err != nil {
				t.Errorf("%s: decoding %s: %v", s.def, b, err)
				continue
			}
			if again, _ := json.Marshal(reflect.ValueOf(s.decode).Elem().Interface()); !bytes.Equal(again, b) {
				t.Errorf("%s: round trip\n was %s\n now %s", s.def, b, again)
			}
		}
	}
}

func compileDef(t *testing.T, file, def string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join(filepath.Dir(sdkSchemaPath(t)), file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	url := "https://agentclientprotocol.com/" + file
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url + "#/$defs/" + def)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
