package toolfs

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// BenchmarkReadWindow reads a 2000-line window from the middle of a
// 100k-line file (2.2 MB; the window's lines fit under the 50 KiB cap)
// through the tool: resolve, stat, load,
// hash, window and envelope. Target: ≤ 5 ms.
func BenchmarkReadWindow(b *testing.B) {
	dir := b.TempDir()
	var sb strings.Builder
	for i := 1; i <= 100_000; i++ {
		sb.WriteString("\tx += f(")
		sb.WriteString(itoa(i))
		sb.WriteString(") // note\n")
	}
	if err := os.WriteFile(dir+"/big.go", []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	read := Read()
	ex := &tools.Exec{CallID: "b", Name: "read", Session: tools.NewSession("b", dir), Args: json.RawMessage(`{"file_path":"big.go","offset":50001,"limit":2000}`)}
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	for b.Loop() {
		out, err := read.Execute(context.Background(), ex)
		if err != nil || !strings.Contains(out.Content[0].Text, "(Showing lines 50001-52000 of 100000.") {
			b.Fatalf("%v %.200q", err, out.Content)
		}
	}
}

// BenchmarkEdit10MB makes a one-line edit in the middle of a 10 MB file
// (just under the 10 MiB streaming threshold) through the tool, including
// the atomic write (with fsync) and the result's hunks. Target: ≤ 50 ms.
func BenchmarkEdit10MB(b *testing.B) {
	dir := b.TempDir()
	var sb strings.Builder
	for i := 1; sb.Len() < 10_000_000; i++ {
		if i == 100_000 {
			sb.WriteString("MARKER-A\n")
			continue
		}
		sb.WriteString("some text on line ")
		sb.WriteString(itoa(i))
		sb.WriteString(" of a large generated file\n")
	}
	if err := os.WriteFile(dir+"/big.txt", []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	sess := tools.NewSession("b", dir)
	read, edit := Read(), Edit()
	if _, err := read.Execute(context.Background(), &tools.Exec{Name: "read", Session: sess, Args: json.RawMessage(`{"file_path":"big.txt","limit":1}`)}); err != nil {
		b.Fatal(err)
	}
	args := []json.RawMessage{
		json.RawMessage(`{"file_path":"big.txt","old_string":"MARKER-A","new_string":"MARKER-B"}`),
		json.RawMessage(`{"file_path":"big.txt","old_string":"MARKER-B","new_string":"MARKER-A"}`),
	}
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		out, err := edit.Execute(context.Background(), &tools.Exec{Name: "edit", Session: sess, Args: args[i%2]})
		if err != nil || !strings.Contains(string(out.Meta), `"line":100000`) {
			b.Fatalf("%v %s", err, out.Meta)
		}
		i++
	}
}
