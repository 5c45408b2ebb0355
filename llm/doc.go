// Package llm is dsh-acp's model client: it sends OpenAI-compatible streaming
// chat-completions requests (DeepSeek by default) and turns the server-sent
// event stream of the answer into deltas and one assembled Response.
//
// Two clients implement [Client]: [HTTP] talks to a live endpoint (with
// retries and optional recording of every exchange), [Replay] answers from
// recorded NNN.sse files. Both feed the bytes through [ParseStream], so a
// replayed run exercises exactly the parser a live run does.
//
// Every failure is reported as an [*Error] whose Code names the situation
// (see the Code* constants); cancellation additionally unwraps to the
// context's error.
package llm
