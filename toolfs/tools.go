package toolfs

import "github.com/dsh-acp/dsh-acp/tools"

// Tools returns read, write and edit, in that order.
func Tools() []tools.Tool {
	return []tools.Tool{Read(), Write(), Edit()}
}
