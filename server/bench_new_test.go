package server_test

import (
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
)

// BenchmarkNew is the start-up work of server.New before the first
// request is read: the default tools built and registered, the agent and
// the bridge assembled. It runs once per process start.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		srv, err := server.New(server.Options{Client: llm.NewReplay(b.TempDir())})
		if err != nil {
			b.Fatal(err)
		}
		srv.Close()
	}
}
