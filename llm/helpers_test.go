package llm

import (
	"errors"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/acptest"
)

// partsReader returns one part per Read call (empty parts give (0, nil)).
type partsReader struct {
	parts [][]byte
}

func (p *partsReader) Read(b []byte) (int, error) {
	if len(p.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(b, p.parts[0])
	p.parts[0] = p.parts[0][n:]
	if len(p.parts[0]) == 0 {
		p.parts = p.parts[1:]
	}
	return n, nil
}

// splitAt cuts data at the given increasing offsets.
func splitAt(data []byte, cuts ...int) io.Reader {
	var parts [][]byte
	prev := 0
	for _, c := range cuts {
		parts = append(parts, data[prev:c])
		prev = c
	}
	parts = append(parts, data[prev:])
	return &partsReader{parts: parts}
}

// result is everything a parse produces, for comparing parses.
type result struct {
	Deltas []Delta
	Resp   *Response
	Code   string
	Msg    string
}

func parse(r io.Reader) result {
	var res result
	resp, err := ParseStream(r, func(d Delta) { res.Deltas = append(res.Deltas, d) })
	res.Resp = resp
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			res.Code = e.Code
		} else {
			res.Code = "not *Error"
		}
		res.Msg = err.Error()
	}
	return res
}

func sameResult(t *testing.T, what string, got, want result) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: results differ\n got: %+v\nwant: %+v", what, got, want)
	}
}

// forEachSource runs f as a subtest on each folder of replay scenarios:
// the repository's recordings (testdata/replay) and, as an extra check
// when they are beside the repository (required under CI=true), the
// recorded sessions of ../shared/fixtures/replay; see
// acptest.ReplaySources.
func forEachSource(t *testing.T, f func(t *testing.T, root string)) {
	t.Helper()
	for _, src := range acptest.ReplaySources(t) {
		t.Run(src.Name, func(t *testing.T) { f(t, src.Dir) })
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func errCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
