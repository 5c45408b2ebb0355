package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
)

// TestClientMessage: an editor's error answer is told in its own words,
// from its data when the message only names the code.
func TestClientMessage(t *testing.T) {
	cases := []struct {
		err  acp.Error
		want string
	}{
		{acp.Error{Code: -32603, Message: "Internal error", Data: "Permission denied (os error 13)"}, "Permission denied (os error 13)"},
		{acp.Error{Code: -32603, Message: "Internal error", Data: json.RawMessage(`"Permission denied"`)}, "Permission denied"},
		{acp.Error{Code: -32603, Message: "Internal error", Data: json.RawMessage(`{"details":"file is read-only"}`)}, "file is read-only"},
		{acp.Error{Code: -32603, Message: "Internal error", Data: json.RawMessage(`{"message":"no such buffer","code":7}`)}, "no such buffer"},
		{acp.Error{Code: -32000, Message: "Permission denied: /etc/x"}, "Permission denied: /etc/x"},
		{acp.Error{Code: -32000, Message: "write failed", Data: "disk full"}, "write failed: disk full"},
		{acp.Error{Code: -32000, Message: "write failed: disk full", Data: "disk full"}, "write failed: disk full"},
		{acp.Error{Code: -32602, Message: "Invalid params", Data: json.RawMessage(`[1,2]`)}, "Invalid params"},
		{acp.Error{Code: -32603}, "error code -32603"},
	}
	for _, c := range cases {
		if got := clientMessage(&c.err); got != c.want {
			t.Errorf("%+v: %q, want %q", c.err, got, c.want)
		}
	}
	err := refused(acp.MethodFSWriteTextFile, fmt.Errorf("acp: %w", &acp.Error{Code: -32603, Message: "Internal error", Data: "Permission denied"}))
	var ae *acp.Error
	if err.Error() != "the editor refused fs/write_text_file: Permission denied" || !errors.As(err, &ae) {
		t.Errorf("refused = %v", err)
	}
	other := errors.New("acp: connection closed")
	if refused(acp.MethodFSReadTextFile, other) != other || refused(acp.MethodFSReadTextFile, nil) != nil {
		t.Error("an error that is not an answer is changed")
	}
}
