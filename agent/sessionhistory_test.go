package agent

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

const png1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// eventWalk makes random session events of every kind the history reads
// (and some it skips), in the orders a session logs them and in others:
// results before their call, late, twice, never, for no call.
type eventWalk struct {
	r       *rand.Rand
	store   *session.Store
	ids     []string // every call id made so far
	pending []string // calls without a result yet
	next    int
}

// content is a prompt's or a result's content: text, sometimes with an
// image (a PNG the notes can read, or data they cannot).
func (w *eventWalk) content(text string) []tools.Content {
	c := []tools.Content{tools.Text(text)}
	switch w.r.IntN(6) {
	case 0:
		c = append(c, tools.Image(png1x1, "image/png"))
	case 1:
		c = append(c, tools.Image("R0lGOD==", "image/gif"), tools.Text(" after"))
	}
	return c
}

// step logs one random event and reports its kind.
func (w *eventWalk) step() string {
	r := w.r
	emit := func(d session.Data) { w.store.Emit(d) }
	switch k := r.IntN(20); {
	case k < 3:
		emit(session.UserMessage{Turn: 1, Content: w.content(fmt.Sprintf("prompt %d", w.next)), Local: r.IntN(8) == 0, Steer: r.IntN(3)})
		return "user"
	case k == 3:
		emit(session.ContextMessage{Text: "context"})
		return "context"
	case k < 8:
		m := session.AssistantMessage{Turn: 1}
		if r.IntN(2) == 0 {
			m.Text = "answer"
		}
		if r.IntN(2) == 0 {
			m.Reasoning = "thinking"
		}
		for range r.IntN(4) {
			w.next++
			id := fmt.Sprintf("call_%d", w.next)
			if len(w.ids) > 0 && r.IntN(15) == 0 {
				id = w.ids[r.IntN(len(w.ids))] // a repeated id
			}
			w.ids, w.pending = append(w.ids, id), append(w.pending, id)
			m.ToolCalls = append(m.ToolCalls, session.ToolCallRef{CallID: id, Name: "read", Arguments: `{"file_path":"a"}`})
		}
		emit(m)
		return "assistant"
	case k < 13 && len(w.pending) > 0:
		i := r.IntN(len(w.pending))
		id := w.pending[i]
		w.pending = append(w.pending[:i], w.pending[i+1:]...)
		w.result(id)
		return "result"
	case k == 13:
		// A result for no call yet, or again for one answered.
		w.next++
		id := fmt.Sprintf("call_%d", w.next+r.IntN(3))
		if len(w.ids) > 0 && r.IntN(2) == 0 {
			id = w.ids[r.IntN(len(w.ids))]
		}
		w.result(id)
		return "result"
	case k == 14:
		status := []string{session.CompactionCompleted, session.CompactionFailed, session.CompactionCancelled}[r.IntN(3)]
		emit(session.Compaction{ID: "cmp", Status: status, Before: int64(r.IntN(w.store.Len() + 1)), Summary: fmt.Sprintf("summary %d", w.next)})
		return "compaction"
	default:
		emit([]session.Data{session.TurnStart{Turn: 1}, session.StepStart{Turn: 1, Step: 1}, session.StepEnd{Turn: 1, Step: 1},
			session.TurnEnd{Turn: 1, Reason: session.EndCancelled}, session.ToolCall{CallID: "call_x", Name: "read"},
			session.Plan{}, session.AssistantChunk{Text: "streamed"}}[r.IntN(7)])
		return "other"
	}
}

// result logs a result of call id: text, an error, a cancelled call's,
// or with an image.
func (w *eventWalk) result(id string) {
	res := session.ToolResult{Turn: 1, CallID: id}
	switch w.r.IntN(4) {
	case 0:
		res.IsError, res.Content = true, []tools.Content{tools.Text("Error: no such file")}
	case 1:
		res.IsError, res.Content = true, []tools.Content{tools.Text("Error: the call was cancelled")}
	default:
		res.Content = w.content("1: line of " + id)
	}
	w.store.Emit(res)
}

// TestSessionHistoryIsHistory: in random sessions, a session's
// incremental history is History's of all its events, with the system
// message and the images setting changing on the way: after every event
// (even seeds) or after batches of 1 to 6 (odd ones, as steps log them);
// it folds (keeps its conversation) unless an event could change what
// is written; and what it returned before is unchanged.
func TestSessionHistoryIsHistory(t *testing.T) {
	for seed := range uint64(200) {
		w := &eventWalk{r: rand.New(rand.NewPCG(seed, 1)), store: session.NewStore(nil)}
		var sh sessionHistory
		images, sys := seed%2 == 0, llm.Message{Role: "system", Content: "system 0"}
		type kept struct {
			msgs []llm.Message
			json string
		}
		var earlier []kept
		settled := true
		for i := range 150 {
			kind := w.step()
			settled = settled && kind != "result" && kind != "compaction"
			if seed%2 == 1 && w.r.IntN(3) > 0 {
				continue
			}
			switch w.r.IntN(30) {
			case 0:
				images, settled = !images, false
			case 1:
				sys = llm.Message{Role: "system", Content: fmt.Sprintf("system %d", i)}
			}
			before := sh.h
			got := sh.messages(w.store, images, sys)
			want := History(w.store.Events(), images, sys)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, event %d (%s): incremental\n%s\nfull\n%s", seed, i, kind, js(got), js(want))
			}
			if before != nil && settled && sh.h != before {
				t.Fatalf("seed %d, event %d (%s): rebuilt the history", seed, i, kind)
			}
			settled = true
			if i%10 == 0 {
				earlier = append(earlier, kept{got, js(got)})
			}
		}
		for _, k := range earlier {
			if js(k.msgs) != k.json {
				t.Fatalf("seed %d: an earlier request changed\n was %s\n now %s", seed, k.json, js(k.msgs))
			}
		}
	}
}

// TestSessionHistorySteps: a session's requests fold each step's events
// (the message, its calls and their results, a cancelled call's) into
// the conversation they keep, with no rebuild, until a compaction.
func TestSessionHistorySteps(t *testing.T) {
	store := benchSession(20)
	var sh sessionHistory
	sys := llm.Message{Role: "system", Content: "s"}
	sh.messages(store, false, sys)
	h := sh.h
	for step := range 10 {
		id := fmt.Sprint("c", step)
		store.Emit(session.AssistantMessage{Reasoning: "r", ToolCalls: []session.ToolCallRef{{CallID: id, Name: "bash"}}})
		store.Emit(session.ToolCall{CallID: id, Name: "bash"})
		store.Emit(session.ToolResult{CallID: id, IsError: step%3 == 0, Content: []tools.Content{tools.Text("Error: cancelled")}})
		store.Emit(session.UserMessage{Content: []tools.Content{tools.Text("steer")}, Steer: 1})
		got := sh.messages(store, false, sys)
		if sh.h != h || !reflect.DeepEqual(got, History(store.Events(), false, sys)) {
			t.Fatalf("step %d: rebuilt %v, or not History's", step, sh.h != h)
		}
	}
	store.Emit(session.Compaction{Status: session.CompactionCompleted, Before: int64(store.Len()), Summary: "sum"})
	store.Emit(session.UserMessage{Content: []tools.Content{tools.Text("next")}})
	if got := sh.messages(store, false, sys); sh.h == h || len(got) != 3 || got[1].Content != SummaryMessage("sum") {
		t.Fatalf("after the compaction: %s", js(got))
	}
}

func js(msgs []llm.Message) string {
	b, _ := json.Marshal(msgs)
	return string(b)
}

// TestSessionHistoryBound: past MaxRequestImageBytes the oldest image
// is left out of the request, as History does, while the request that
// carried it keeps it.
func TestSessionHistoryBound(t *testing.T) {
	big := strings.Repeat("A", MaxRequestImageBytes/3)
	store := session.NewStore(nil)
	var sh sessionHistory
	sys := llm.Message{Role: "system", Content: "s"}
	var first []llm.Message
	for i := range 3 {
		store.Emit(session.UserMessage{Content: []tools.Content{tools.Text(fmt.Sprint("look ", i)), tools.Image(big, "image/png")}})
		got := sh.messages(store, true, sys)
		if want := History(store.Events(), true, sys); !reflect.DeepEqual(got, want) {
			t.Fatalf("image %d: the request differs from History's", i)
		}
		if i == 0 {
			first = got
		}
		if i == 2 && (got[1].Parts[1].ImageURL != "" || !strings.Contains(got[1].Parts[1].Text, "left out") || got[3].Parts[1].ImageURL == "") {
			t.Fatalf("third request: first image %+v", got[1].Parts[1].Text)
		}
	}
	if first[1].Parts[1].ImageURL == "" || sh.h.msgs[1].Parts[1].ImageURL == "" {
		t.Errorf("leaving the image out of the third request changed the first or the history kept")
	}
}
