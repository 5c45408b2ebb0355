package acp

import "encoding/json"

// This file holds the params and results of the methods the agent calls
// on the editor (x-side "client" in the schema), other than
// `session/update` (update.go).

// The permission option kinds of ACP v1 (schema type
// PermissionOptionKind).
const (
	AllowOnce    = "allow_once"
	AllowAlways  = "allow_always"
	RejectOnce   = "reject_once"
	RejectAlways = "reject_always"
)

// PermissionOption is one answer the user can give (schema type
// PermissionOption). Kind is AllowOnce, AllowAlways, RejectOnce or
// RejectAlways.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// RequestPermissionRequest is the params of `session/request_permission`
// (schema type RequestPermissionRequest): ToolCall is the card the user
// sees while deciding.
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
	Meta      Meta               `json:"_meta,omitempty"`
}

// The permission outcomes of ACP v1 (schema type RequestPermissionOutcome).
const (
	OutcomeSelected  = "selected"
	OutcomeCancelled = "cancelled"
)

// PermissionOutcome is the editor's answer (schema type
// RequestPermissionOutcome): Outcome OutcomeSelected with OptionID, or
// OutcomeCancelled.
type PermissionOutcome struct {
	Outcome  string `json:"outcome"`
	OptionID string `json:"optionId,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// RequestPermissionResponse is the result of `session/request_permission`
// (schema type RequestPermissionResponse).
type RequestPermissionResponse struct {
	Outcome PermissionOutcome `json:"outcome"`
	Meta    Meta              `json:"_meta,omitempty"`
}

// ReadTextFileRequest is the params of `fs/read_text_file` (schema type
// ReadTextFileRequest). Path is absolute; Line is 1-based; Limit counts
// lines.
type ReadTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Line      *int   `json:"line,omitempty"`
	Limit     *int   `json:"limit,omitempty"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// ReadTextFileResponse is the result of `fs/read_text_file` (schema type
// ReadTextFileResponse).
type ReadTextFileResponse struct {
	Content string `json:"content"`
	Meta    Meta   `json:"_meta,omitempty"`
}

// WriteTextFileRequest is the params of `fs/write_text_file` (schema type
// WriteTextFileRequest). Path is absolute.
type WriteTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// WriteTextFileResponse is the result of `fs/write_text_file` (schema
// type WriteTextFileResponse).
type WriteTextFileResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// The elicitation modes of ACP v1 (schema type CreateElicitationRequest).
const (
	ElicitForm = "form"
	ElicitURL  = "url"
)

// CreateElicitationRequest is the params of `elicitation/create` (schema
// type CreateElicitationRequest): ask the user for input, with a form
// (Mode ElicitForm, RequestedSchema) or by sending them to a page (Mode
// ElicitURL, ElicitationID, URL). It is tied to a session (SessionID, and
// optionally ToolCallID) or, outside sessions, to the request RequestID
// (a raw JSON id); set one of the two scopes. Send it only to editors
// that advertised the mode in ClientCapabilities.Elicitation.
type CreateElicitationRequest struct {
	Mode            string             `json:"mode"`
	Message         string             `json:"message"`
	SessionID       string             `json:"sessionId,omitempty"`
	ToolCallID      string             `json:"toolCallId,omitempty"`
	RequestID       json.RawMessage    `json:"requestId,omitempty"`
	RequestedSchema *ElicitationSchema `json:"requestedSchema,omitempty"`
	ElicitationID   string             `json:"elicitationId,omitempty"`
	URL             string             `json:"url,omitempty"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// ElicitationSchema is the form of a form elicitation (schema type
// ElicitationSchema): an object schema whose properties are primitives.
// Type is "object" (written as such when empty).
type ElicitationSchema struct {
	Type        string                               `json:"type,omitempty"`
	Title       string                               `json:"title,omitempty"`
	Properties  map[string]ElicitationPropertySchema `json:"properties,omitempty"`
	Required    []string                             `json:"required,omitempty"`
	Description string                               `json:"description,omitempty"`
	Meta        Meta                                 `json:"_meta,omitempty"`
}

// ElicitationPropertySchema is one form field (schema type
// ElicitationPropertySchema), by Type: "string" (MinLength, MaxLength,
// Pattern, Format, Enum, OneOf), "number" and "integer" (Minimum,
// Maximum), "boolean", or "array" (a multi-select: MinItems, MaxItems,
// Items). Default's JSON type follows Type. Only the fields of its type
// should be set.
type ElicitationPropertySchema struct {
	Type        string          `json:"type"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MinLength   *int            `json:"minLength,omitempty"`
	MaxLength   *int            `json:"maxLength,omitempty"`
	Pattern     string          `json:"pattern,omitempty"`
	Format      string          `json:"format,omitempty"`
	Enum        []string        `json:"enum,omitempty"`
	OneOf       []EnumOption    `json:"oneOf,omitempty"`
	Minimum     json.Number     `json:"minimum,omitempty"`
	Maximum     json.Number     `json:"maximum,omitempty"`
	MinItems    *int            `json:"minItems,omitempty"`
	MaxItems    *int            `json:"maxItems,omitempty"`
	Items       *MultiSelect    `json:"items,omitempty"`
	Default     json.RawMessage `json:"default,omitempty"`
	Meta        Meta            `json:"_meta,omitempty"`
}

// EnumOption is one titled choice of a string field (schema type
// EnumOption).
type EnumOption struct {
	Const       string `json:"const"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// MultiSelect is the choices of an array field (schema type
// MultiSelectItems): plain strings (Type "string", Enum) or titled ones
// (AnyOf).
type MultiSelect struct {
	Type  string       `json:"type,omitempty"`
	Enum  []string     `json:"enum,omitempty"`
	AnyOf []EnumOption `json:"anyOf,omitempty"`
	Meta  Meta         `json:"_meta,omitempty"`
}

// The elicitation actions of ACP v1 (schema type CreateElicitationResponse).
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// CreateElicitationResponse is the result of `elicitation/create` (schema
// type CreateElicitationResponse): Action ElicitAccept with the form's
// Content (values are strings, numbers, booleans or string lists),
// ElicitDecline or ElicitCancel.
type CreateElicitationResponse struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// CompleteElicitationNotification is the params of
// `elicitation/complete` (schema type CompleteElicitationNotification):
// the URL elicitation ElicitationID is done.
type CompleteElicitationNotification struct {
	ElicitationID string `json:"elicitationId"`
	Meta          Meta   `json:"_meta,omitempty"`
}
