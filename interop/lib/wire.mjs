// Wire checks: a tap on the raw bytes the agent writes and on the messages the
// client sends. It checks what the SDK checks only partly or silently:
// every stdout line is a JSON-RPC 2.0 object, every agent request,
// notification and response matches the SDK's own generated ACP v1 schemas
// (the SDK validates requests and notifications but not responses, and it
// drops an invalid notification with a one-line console message), turn
// updates never arrive outside a prompt turn, and no field is silently
// dropped or replaced by the SDK's lenient parsing.

// The SDK's generated zod schemas; the package does not export this module,
// so it is imported by file path (same file the SDK itself loads).
import * as zs from "../node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js";
// The unstable schemas: what a field the stable schema lacks may still be
// (e.g. sessionCapabilities.fork, advertised as the unstable schema says).
import * as zu from "../node_modules/@agentclientprotocol/sdk/dist/v1/unstable/schema/zod.gen.js";
import { TURN_UPDATE_KINDS } from "./recorder.mjs";

/** Schemas of requests and notifications the agent may send, by method. */
const INCOMING_PARAMS = {
  "session/update": zs.zSessionNotification,
  "session/request_permission": zs.zRequestPermissionRequest,
  "fs/read_text_file": zs.zReadTextFileRequest,
  "fs/write_text_file": zs.zWriteTextFileRequest,
  "terminal/create": zs.zCreateTerminalRequest,
  "terminal/output": zs.zTerminalOutputRequest,
  "terminal/release": zs.zReleaseTerminalRequest,
  "terminal/wait_for_exit": zs.zWaitForTerminalExitRequest,
  "terminal/kill": zs.zKillTerminalRequest,
  "elicitation/create": zs.zCreateElicitationRequest,
  "elicitation/complete": zs.zCompleteElicitationNotification,
};

/**
 * Unstable schemas of responses that may carry unstable-only fields: a
 * field the stable parse drops but this one keeps is defined by the
 * unstable protocol (a stable client ignores it), not silently lost.
 */
const UNSTABLE_RESULTS = {
  initialize: zu.zInitializeResponse,
  // The turn's usage (PromptResponse.usage, unstable).
  "session/prompt": zu.zPromptResponse,
};

/** Schemas of the agent's responses, by the method of the client's request. */
const RESPONSE_RESULTS = {
  initialize: zs.zInitializeResponse,
  authenticate: zs.zAuthenticateResponse,
  "session/new": zs.zNewSessionResponse,
  "session/load": zs.zLoadSessionResponse,
  "session/set_mode": zs.zSetSessionModeResponse,
  "session/close": zs.zCloseSessionResponse,
  "session/prompt": zs.zPromptResponse,
};

const MAX_SHOWN = 300; // characters of a raw line quoted in an error

function clip(s) {
  return s.length > MAX_SHOWN ? s.slice(0, MAX_SHOWN) + "…" : s;
}

function isRecord(v) {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * formatIssues renders zod issues as "path: message" lines. For a union it
 * names the branches that got past their discriminant, which is the variant
 * the sender meant.
 */
export function formatIssues(issues, prefix = []) {
  const out = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === "invalid_union" && Array.isArray(issue.errors)) {
      // A union of literals: one line listing what was expected.
      const literals = issue.errors.every((b) => b.length === 1 && b[0].code === "invalid_value" && b[0].path.length === 0);
      if (literals) {
        const expected = issue.errors.flatMap((b) => b[0].values ?? []);
        out.push(`${path.join(".") || "(root)"}: expected one of ${JSON.stringify(expected)}`);
        continue;
      }
      const meant = issue.errors.filter(
        (branch) => !branch.some((i) => (i.code === "invalid_value" || i.code === "invalid_literal") && ["sessionUpdate", "type", "outcome", "kind"].includes(String(i.path.at(-1)))),
      );
      if (meant.length > 0) {
        for (const branch of meant) {
          out.push(...formatIssues(branch, path));
        }
        continue;
      }
    }
    out.push(`${path.join(".") || "(root)"}: ${issue.message}`);
  }
  return out;
}

/** droppedFields lists where parsed differs from raw: keys dropped, values replaced. */
export function droppedFields(raw, parsed, path = "") {
  const out = [];
  if (isRecord(raw)) {
    if (!isRecord(parsed)) {
      out.push(`${path || "(root)"}: object replaced by ${clip(JSON.stringify(parsed) ?? "undefined")}`);
      return out;
    }
    for (const [k, v] of Object.entries(raw)) {
      const p = path ? `${path}.${k}` : k;
      if (!(k in parsed) || parsed[k] === undefined) {
        if (v !== undefined) {
          out.push(`${p}: dropped (was ${clip(JSON.stringify(v))})`);
        }
        continue;
      }
      out.push(...droppedFields(v, parsed[k], p));
    }
    return out;
  }
  if (Array.isArray(raw)) {
    if (!Array.isArray(parsed)) {
      out.push(`${path}: array replaced by ${clip(JSON.stringify(parsed) ?? "undefined")}`);
      return out;
    }
    if (parsed.length !== raw.length) {
      out.push(`${path}: ${raw.length - parsed.length} item(s) skipped`);
      return out;
    }
    raw.forEach((v, i) => out.push(...droppedFields(v, parsed[i], `${path}[${i}]`)));
    return out;
  }
  if (raw !== parsed) {
    out.push(`${path}: value ${clip(JSON.stringify(raw))} replaced by ${clip(JSON.stringify(parsed) ?? "undefined")}`);
  }
  return out;
}

/**
 * WireChecker holds the wire state: the client's outstanding requests and
 * which sessions have a prompt in flight. errors and warnings are the arrays
 * run.mjs prints.
 */
export class WireChecker {
  constructor(errors, warnings) {
    this.errors = errors;
    this.warnings = warnings;
    this.sent = new Map(); // request id -> {method, params}
    this.promptInFlight = new Map(); // sessionId -> request id
    this.lines = 0;
    this.stdoutBytes = 0;
  }

  /** outgoing notes a message the client is about to write. */
  outgoing(message) {
    if (isRecord(message) && "method" in message && "id" in message) {
      this.sent.set(message.id, { method: message.method, params: message.params });
      if (message.method === "session/prompt" && isRecord(message.params)) {
        this.promptInFlight.set(message.params.sessionId, message.id);
      }
    }
  }

  /** tapStream returns a pass-through byte stream that checks every line. */
  tapStream() {
    const decoder = new TextDecoder("utf-8", { fatal: false });
    let pending = "";
    return new TransformStream({
      transform: (chunk, controller) => {
        this.stdoutBytes += chunk.byteLength;
        pending += decoder.decode(chunk, { stream: true });
        let nl;
        while ((nl = pending.indexOf("\n")) >= 0) {
          this.line(pending.slice(0, nl));
          pending = pending.slice(nl + 1);
        }
        controller.enqueue(chunk);
      },
      flush: () => {
        pending += decoder.decode();
        if (pending.length > 0) {
          this.errors.push(`wire: stdout ended without a newline after ${clip(pending)}`);
          this.line(pending);
        }
      },
    });
  }

  /** line checks one stdout line (without its newline). */
  line(text) {
    this.lines++;
    const where = `stdout line ${this.lines}`;
    if (text.endsWith("\r")) {
      this.warnings.push(`wire: ${where} ends with CR`);
    }
    if (text.trim() === "") {
      this.errors.push(`wire: ${where} is empty`);
      return;
    }
    let msg;
    try {
      msg = JSON.parse(text);
    } catch (e) {
      this.errors.push(`wire: ${where} is not JSON (${e.message}): ${clip(text)}`);
      return;
    }
    if (!isRecord(msg)) {
      this.errors.push(`wire: ${where} is not a JSON object: ${clip(text)}`);
      return;
    }
    if (msg.jsonrpc !== "2.0") {
      this.errors.push(`wire: ${where} lacks "jsonrpc":"2.0": ${clip(text)}`);
    }
    if (typeof msg.method === "string") {
      this.#incoming(msg, where, text);
    } else if ("id" in msg) {
      this.#response(msg, where, text);
    } else {
      this.errors.push(`wire: ${where} is neither request, notification nor response: ${clip(text)}`);
    }
  }

  #validate(schema, value, label, text, unstable) {
    const res = schema.safeParse(value);
    if (!res.success) {
      this.errors.push(`schema: ${label} rejected by SDK schema: ${formatIssues(res.error.issues).join("; ")} -- message: ${clip(text)}`);
      return;
    }
    let dropped = droppedFields(value, res.data);
    if (unstable && dropped.length > 0) {
      const un = unstable.safeParse(value);
      if (!un.success) {
        this.errors.push(`schema: ${label} rejected by the SDK's unstable schema: ${formatIssues(un.error.issues).join("; ")} -- message: ${clip(text)}`);
        return;
      }
      const droppedToo = new Set(droppedFields(value, un.data));
      dropped = dropped.filter((d) => droppedToo.has(d));
    }
    for (const d of dropped) {
      this.warnings.push(`lenient: ${label}: SDK parse changed ${d}`);
    }
  }

  #incoming(msg, where, text) {
    const isRequest = "id" in msg;
    const schema = INCOMING_PARAMS[msg.method];
    const label = `${isRequest ? "request" : "notification"} ${msg.method} (${where})`;
    if (!schema) {
      (isRequest ? this.errors : this.warnings).push(`wire: unknown agent ${label}: ${clip(text)}`);
      return;
    }
    if (msg.method === "session/update") {
      if (isRequest) {
        this.errors.push(`wire: session/update sent as a request (has id): ${clip(text)}`);
      }
      const kind = msg.params?.update?.sessionUpdate;
      const sid = msg.params?.sessionId;
      if (TURN_UPDATE_KINDS.has(kind) && !this.promptInFlight.has(sid)) {
        this.errors.push(`protocol: ${kind} update for session ${sid} outside a prompt turn (after the session/prompt response or before any prompt) (${where})`);
      }
    } else if (!isRequest) {
      this.errors.push(`wire: ${msg.method} sent as a notification (no id): ${clip(text)}`);
    }
    this.#validate(schema, msg.params, label, text);
  }

  #response(msg, where, text) {
    const req = this.sent.get(msg.id);
    if (!req) {
      this.errors.push(`wire: response to unknown request id ${JSON.stringify(msg.id)} (${where}): ${clip(text)}`);
      return;
    }
    this.sent.delete(msg.id);
    if (req.method === "session/prompt" && isRecord(req.params)) {
      this.promptInFlight.delete(req.params.sessionId);
    }
    const hasResult = "result" in msg;
    const hasError = "error" in msg;
    if (hasResult === hasError) {
      this.errors.push(`wire: response ${where} must carry exactly one of result/error: ${clip(text)}`);
      return;
    }
    if (hasError) {
      const e = msg.error;
      if (!isRecord(e) || !Number.isInteger(e.code) || typeof e.message !== "string") {
        this.errors.push(`wire: malformed error object (${where}): ${clip(text)}`);
      }
      return; // the step runner reports the failed request itself
    }
    const schema = RESPONSE_RESULTS[req.method];
    if (schema) {
      this.#validate(schema, msg.result, `response to ${req.method} (${where})`, text, UNSTABLE_RESULTS[req.method]);
    }
  }

  /** finish reports client requests the agent never answered. */
  finish() {
    for (const [id, req] of this.sent) {
      this.errors.push(`protocol: request ${JSON.stringify(id)} ${req.method} never answered`);
    }
  }
}
