// This file keeps big params and results away from sourcegraph/jsonrpc2's
// generic decoding: the library decodes a request's params into an
// interface value and encodes them again, several copies of a message
// that may be tens of MiB. A big value is set aside, the library sees a
// short placeholder string, and the Conn takes the value back.

package acp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
)

// setAside returns line, or, for a line over maxKeptBuffer whose
// top-level "params" or "result" is most of it, a copy with that value
// replaced by a placeholder (a string naming it in s.aside): the JSON-RPC
// library decodes params generically and encodes them again, which costs
// several copies of a big message; the Conn takes the value back with
// resolve. The value itself is not copied: it stays in line, whose buffer
// is never reused once this big.
func (s *lineStream) setAside(line []byte) []byte {
	if len(line) <= maxKeptBuffer {
		return line
	}
	var m msgScan
	m.feed(line)
	if m.bodyEnd == 0 || m.bodyEnd-m.bodyStart < int64(len(line))/2 {
		return line
	}
	ph := s.aside.put(json.RawMessage(line[m.bodyStart:m.bodyEnd]))
	out := make([]byte, 0, int64(len(line))-(m.bodyEnd-m.bodyStart)+int64(len(ph)))
	out = append(out, line[:m.bodyStart]...)
	out = append(out, ph...)
	return append(out, line[m.bodyEnd:]...)
}

// resolve returns the value a placeholder of setAside stands for (and
// forgets it), or raw itself when it is none.
func (s *lineStream) resolve(raw json.RawMessage) json.RawMessage {
	return s.aside.take(raw)
}

// aside holds values set aside by setAside until the Conn takes them;
// at most limit bytes, the oldest forgotten first (a response nobody
// waits for any more is never taken).
type aside struct {
	mu     sync.Mutex
	prefix string // `"dsh-acp-aside:<random>:`, so a client cannot forge one
	next   int
	vals   map[string]json.RawMessage
	order  []string
	bytes  int64
	limit  int64
}

func (a *aside) init(limit int64) {
	var r [12]byte
	_, _ = rand.Read(r[:])
	a.prefix = `"dsh-acp-aside:` + hex.EncodeToString(r[:]) + ":"
	a.vals, a.limit = map[string]json.RawMessage{}, limit
}

// put keeps v and returns its placeholder (a JSON string).
func (a *aside) put(v json.RawMessage) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	key := a.prefix + strconv.Itoa(a.next) + `"`
	a.vals[key] = v
	a.order = append(a.order, key)
	a.bytes += int64(len(v))
	for a.bytes > a.limit && len(a.order) > 1 {
		old := a.order[0]
		a.order = a.order[1:]
		a.bytes -= int64(len(a.vals[old]))
		delete(a.vals, old)
	}
	return []byte(key)
}

// take returns the value of placeholder raw and forgets it; raw itself
// when it is not a placeholder (or one already forgotten: then the
// placeholder string stays, and decoding it fails visibly).
func (a *aside) take(raw json.RawMessage) json.RawMessage {
	if len(raw) < len(a.prefix) || string(raw[:len(a.prefix)]) != a.prefix {
		return raw
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.vals[string(raw)]
	if !ok {
		return raw
	}
	delete(a.vals, string(raw))
	a.bytes -= int64(len(v))
	a.order = slices.DeleteFunc(a.order, func(k string) bool { return k == string(raw) })
	return v
}
