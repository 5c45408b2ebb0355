package main

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/bridge"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

func benchPresentPair(b *testing.B, reg *tools.Registry) {
	enc := json.NewEncoder(io.Discard)
	call := session.Event{Data: session.ToolCall{CallID: "call_1", Name: "card_diff", Arguments: `{"path":"config.txt"}`}}
	res := session.Event{Data: session.ToolResult{CallID: "call_1", Content: []tools.Content{tools.Text("ok")}, Meta: json.RawMessage(`{"line":2}`)}}
	p := bridge.NewPresenter(bridge.View{Cwd: "/proj", LineBase: 1}, reg)
	for i := 0; i < b.N; i++ {
		for _, ev := range []session.Event{call, res} {
			for _, u := range p.Updates(ev) {
				if err := enc.Encode(acp.SessionNotification{SessionID: "s", Update: u}); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
