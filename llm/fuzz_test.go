package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzParseStream checks ParseStream never panics, always returns a
// Response, and gives the same result however the input is split into reads.
func FuzzParseStream(f *testing.F) {
	f.Add([]byte("data: [DONE]\n\n"), uint64(1))
	f.Add([]byte("data: {}\r\n\r\ndata:[DONE]"), uint64(7))
	f.Add([]byte(": keep-alive\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"日\"}}]}\n\n"), uint64(3))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\ndata: \"delta\":{\"reasoning_content\":\"x\"}}]}\n\ndata: [DONE]\n\n"), uint64(11))
	f.Add([]byte("data: {\"error\":{\"message\":\"no\"}}\n\n"), uint64(5))
	f.Add([]byte("{\"error\":{\"message\":\"Insufficient Balance\"}}"), uint64(2))
	f.Add([]byte("data: {bad\n\n"), uint64(9))
	if b, err := os.ReadFile(filepath.Join("testdata", "parallel.sse")); err == nil {
		f.Add(b, uint64(42))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		want := parse(bytes.NewReader(data))
		if want.Resp == nil {
			t.Fatal("nil response")
		}
		if want.Code == "" && want.Resp.FinishReason == "" {
			t.Fatal("empty finish reason on success")
		}
		for _, d := range want.Deltas {
			if d.Text == "" && d.Kind != DeltaToolCall {
				t.Fatalf("empty delta %+v", d)
			}
		}
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		var cuts []int
		for i := 1; i < len(data); i++ {
			if rng.IntN(4) == 0 {
				cuts = append(cuts, i)
			}
		}
		sameResult(t, fmt.Sprintf("cuts %v", cuts), parse(splitAt(data, cuts...)), want)
		sameResult(t, "one byte reads", parse(iotest.OneByteReader(bytes.NewReader(data))), want)
	})
}

// syntheticStream builds a live-shaped stream of about n chunks: reasoning,
// then text, then four parallel tool calls with interleaved argument pieces.
func syntheticStream(n int) []byte {
	var b bytes.Buffer
	env := `{"id":"0ef8b2cd-3fbb-5864-aa0a-f919bf7baf13","object":"chat.completion.chunk","created":1782094878,"model":"deepseek-v4-flash","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":%s}`
	event := func(delta, finish, usage string) {
		b.WriteString("data: ")
		fmt.Fprintf(&b, env, delta, finish, usage)
		b.WriteString("\n\n")
	}
	str := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	event(`{"role":"assistant","content":null,"reasoning_content":""}`, "null", "null")
	words := strings.Fields("the user wants me to read the file and then edit it carefully 日本語 so let me think")
	for i := 0; i < n*3/8; i++ {
		event(`{"content":null,"reasoning_content":`+str(" "+words[i%len(words)])+`}`, "null", "null")
	}
	for i := 0; i < n/4; i++ {
		event(`{"content":`+str(" "+words[i%len(words)])+`,"reasoning_content":null}`, "null", "null")
	}
	for c := 0; c < 4; c++ {
		event(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_0%d_abcdefghijklmnopqrstuvwx","type":"function","function":{"name":"edit","arguments":""}}]}`, c, c), "null", "null")
	}
	for i := 0; i < n*3/8; i++ {
		event(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, i%4, str(`\"`+words[i%len(words)])), "null", "null")
	}
	event(`{"content":"","reasoning_content":null}`, `"tool_calls"`,
		`{"prompt_tokens":1003,"completion_tokens":28,"total_tokens":1031,"prompt_tokens_details":{"cached_tokens":768},"completion_tokens_details":{"reasoning_tokens":25},"prompt_cache_hit_tokens":768,"prompt_cache_miss_tokens":235}`)
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

func TestSyntheticStreamParses(t *testing.T) {
	data := syntheticStream(800)
	res, err := ParseStream(bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 4 || res.FinishReason != "tool_calls" || res.Usage.TotalTokens != 1031 || !strings.HasPrefix(res.Text, " the user") {
		t.Fatalf("unexpected %+v", res)
	}
	if !reflect.DeepEqual(parse(iotest.HalfReader(bytes.NewReader(data))), parse(bytes.NewReader(data))) {
		t.Fatal("half reads differ")
	}
}

// BenchmarkParseStream measures ParseStream over a large synthetic stream
// (about 8 MB of live-shaped chunks); MB/s is bytes of stream per second.
func BenchmarkParseStream(b *testing.B) {
	data := syntheticStream(25000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var deltas int
		if _, err := ParseStream(bytes.NewReader(data), func(Delta) { deltas++ }); err != nil {
			b.Fatal(err)
		}
	}
}
