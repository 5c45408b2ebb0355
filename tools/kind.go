package tools

// Kind says what a tool call does, so an editor can pick an icon. The values
// are ACP ToolKind values (without "think" and "switch_mode").
type Kind string

// The kinds a tool call can have; KindOther is the default.
const (
	KindRead    Kind = "read"
	KindEdit    Kind = "edit"
	KindDelete  Kind = "delete"
	KindMove    Kind = "move"
	KindSearch  Kind = "search"
	KindExecute Kind = "execute"
	KindFetch   Kind = "fetch"
	KindOther   Kind = "other"
)

// Valid reports whether k is one of the kinds above.
func (k Kind) Valid() bool {
	switch k {
	case KindRead, KindEdit, KindDelete, KindMove, KindSearch, KindExecute, KindFetch, KindOther:
		return true
	}
	return false
}
