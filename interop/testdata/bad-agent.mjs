#!/usr/bin/env node
// A deliberately broken ACP agent for the interop self-test: it answers
// initialize and session/new correctly, then during the prompt writes a
// non-JSON stdout line, a message chunk without its text, one with a field
// ACP does not define, an update for a tool call it never announced, a
// prompt response with an invalid stopReason, and a message chunk after that
// response. It exits 3, 300 ms after stdin EOF.
// Arguments (--replay DIR) are ignored.

import { createInterface } from "node:readline";

const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
const update = (sessionId, u) => send({ method: "session/update", params: { sessionId, update: u } });

const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.id === undefined || msg.method === undefined) {
    return; // responses and notifications from the client (e.g. its parse error report)
  }
  switch (msg.method) {
    case "initialize":
      send({ id: msg.id, result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [] } });
      return;
    case "session/new":
      send({ id: msg.id, result: { sessionId: "s1" } });
      return;
    case "session/prompt": {
      const sid = msg.params.sessionId;
      process.stdout.write("this line is not json\n");
      update(sid, { sessionUpdate: "agent_message_chunk", content: { type: "text" } });
      update(sid, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "OK" }, extraField: 1 });
      update(sid, { sessionUpdate: "tool_call_update", toolCallId: "ghost", status: "completed" });
      send({ id: msg.id, result: { stopReason: "finished" } });
      setTimeout(() => update(sid, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "LATE" } }), 100);
      return;
    }
    default:
      send({ id: msg.id, error: { code: -32601, message: `Method not found: ${msg.method}` } });
  }
});
rl.on("close", () => {
  setTimeout(() => process.exit(3), 300); // lets the late update go out first
});
