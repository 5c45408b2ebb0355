package acp

import (
	"encoding/json"
	"fmt"
)

// The config option types of ACP v1 (schema type SessionConfigOption).
const (
	ConfigSelect  = "select"
	ConfigBoolean = "boolean"
)

// The config option categories of ACP v1 (schema type
// SessionConfigOptionCategory); any other string is allowed too.
const (
	CategoryMode         = "mode"
	CategoryModel        = "model"
	CategoryModelConfig  = "model_config"
	CategoryThoughtLevel = "thought_level"
)

// SessionConfigOption is one session setting and its current value
// (schema type SessionConfigOption): a select (dropdown, Select set) or a
// boolean toggle (Boolean set); exactly one of the two is set. Category is
// a hint for the editor's UI (Category* constants).
type SessionConfigOption struct {
	ID          string
	Name        string
	Description string
	Category    string
	Select      *SessionConfigSelect
	Boolean     *SessionConfigBoolean
	Meta        Meta
}

// SessionConfigSelect is a select option's state (schema type
// SessionConfigSelect): CurrentValue is the value of one of its choices,
// given as a flat list (Options) or under headers (Groups; then Options
// is nil).
type SessionConfigSelect struct {
	CurrentValue string
	Options      []SessionConfigSelectOption
	Groups       []SessionConfigSelectGroup
}

// SessionConfigSelectOption is one choice of a select (schema type
// SessionConfigSelectOption).
type SessionConfigSelectOption struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// SessionConfigSelectGroup is a header and its choices (schema type
// SessionConfigSelectGroup).
type SessionConfigSelectGroup struct {
	Group   string                      `json:"group"`
	Name    string                      `json:"name"`
	Options []SessionConfigSelectOption `json:"options"`
	Meta    Meta                        `json:"_meta,omitempty"`
}

// SessionConfigBoolean is a toggle's state (schema type
// SessionConfigBoolean). Editors render it only when they advertised
// `session.configOptions.boolean`.
type SessionConfigBoolean struct {
	CurrentValue bool
}

// configOptionWire is the union of the wire fields of both option types.
type configOptionWire struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	Category     string          `json:"category,omitempty"`
	Type         string          `json:"type"`
	CurrentValue json.RawMessage `json:"currentValue"`
	Options      json.RawMessage `json:"options,omitempty"`
	Meta         Meta            `json:"_meta,omitempty"`
}

// MarshalJSON writes {id, name, description, category, type,
// currentValue, options (select only), _meta}. Neither or both of Select
// and Boolean set is an error.
func (o SessionConfigOption) MarshalJSON() ([]byte, error) {
	w := configOptionWire{ID: o.ID, Name: o.Name, Description: o.Description, Category: o.Category, Meta: o.Meta}
	var err error
	switch {
	case o.Select != nil && o.Boolean == nil:
		w.Type = ConfigSelect
		w.CurrentValue = JSONString(o.Select.CurrentValue)
		if o.Select.Groups != nil {
			w.Options, err = json.Marshal(o.Select.Groups)
		} else {
			w.Options, err = json.Marshal(nonNil(o.Select.Options))
		}
	case o.Boolean != nil && o.Select == nil:
		w.Type = ConfigBoolean
		w.CurrentValue, err = json.Marshal(o.Boolean.CurrentValue)
	default:
		return nil, fmt.Errorf("acp: config option %q must be exactly one of select and boolean", o.ID)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a select (flat or grouped choices) or a boolean
// option; another type is an error.
func (o *SessionConfigOption) UnmarshalJSON(data []byte) error {
	var w configOptionWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*o = SessionConfigOption{ID: w.ID, Name: w.Name, Description: w.Description, Category: w.Category, Meta: w.Meta}
	switch w.Type {
	case ConfigSelect:
		o.Select = &SessionConfigSelect{}
		if err := json.Unmarshal(w.CurrentValue, &o.Select.CurrentValue); err != nil {
			return fmt.Errorf("acp: config option %q: currentValue: %w", w.ID, err)
		}
		var probe []struct {
			Group *string `json:"group"`
		}
		if err := json.Unmarshal(w.Options, &probe); err != nil {
			return fmt.Errorf("acp: config option %q: options: %w", w.ID, err)
		}
		if len(probe) > 0 && probe[0].Group != nil {
			return json.Unmarshal(w.Options, &o.Select.Groups)
		}
		return json.Unmarshal(w.Options, &o.Select.Options)
	case ConfigBoolean:
		o.Boolean = &SessionConfigBoolean{}
		return json.Unmarshal(w.CurrentValue, &o.Boolean.CurrentValue)
	}
	return fmt.Errorf("acp: config option %q has unknown type %q", w.ID, w.Type)
}

// SetSessionConfigOptionRequest is the params of
// `session/set_config_option` (schema type SetSessionConfigOptionRequest):
// the new value of option ConfigID, a choice's value for a select
// (ValueID) or, when Boolean is non-nil, a toggle's (written with type
// "boolean").
type SetSessionConfigOptionRequest struct {
	SessionID string
	ConfigID  string
	ValueID   string
	Boolean   *bool
	Meta      Meta
}

type setConfigWire struct {
	SessionID string          `json:"sessionId"`
	ConfigID  string          `json:"configId"`
	Type      string          `json:"type,omitempty"`
	Value     json.RawMessage `json:"value"`
	Meta      Meta            `json:"_meta,omitempty"`
}

// MarshalJSON writes {sessionId, configId, type (boolean only), value}.
func (r SetSessionConfigOptionRequest) MarshalJSON() ([]byte, error) {
	w := setConfigWire{SessionID: r.SessionID, ConfigID: r.ConfigID, Value: JSONString(r.ValueID), Meta: r.Meta}
	if r.Boolean != nil {
		w.Type = ConfigBoolean
		w.Value, _ = json.Marshal(*r.Boolean)
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a boolean value (type "boolean") or a value id
// (any other type, or none, with a string value). A missing value, or
// one of the wrong JSON type, is an error.
func (r *SetSessionConfigOptionRequest) UnmarshalJSON(data []byte) error {
	var w setConfigWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*r = SetSessionConfigOptionRequest{SessionID: w.SessionID, ConfigID: w.ConfigID, Meta: w.Meta}
	if len(w.Value) == 0 {
		return fmt.Errorf("acp: set_config_option without a value")
	}
	if w.Type == ConfigBoolean {
		r.Boolean = new(bool)
		return json.Unmarshal(w.Value, r.Boolean)
	}
	return json.Unmarshal(w.Value, &r.ValueID)
}

// SetSessionConfigOptionResponse is the result of
// `session/set_config_option` (schema type SetSessionConfigOptionResponse):
// every option of the session with its value after the change.
type SetSessionConfigOptionResponse struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"`
	Meta          Meta                  `json:"_meta,omitempty"`
}
