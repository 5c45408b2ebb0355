// Step runner: connects the SDK client app to the agent's stdio and runs the
// steps of a fixture's input.json.

import { fileURLToPath } from "node:url";
import { PROTOCOL_VERSION, RequestError, client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const CLIENT_NAME = "dsh-acp-interop";
const CLIENT_VERSION = "1.0.0";

/** flush lets notification handlers the SDK already dispatched run to completion. */
function flush() {
  return new Promise((resolve) => setImmediate(resolve));
}

function describeError(e) {
  if (e instanceof RequestError || (e && typeof e.code === "number")) {
    const data = e.data === undefined ? "" : ` data=${JSON.stringify(e.data)}`;
    return `JSON-RPC error ${e.code}: ${e.message}${data}`;
  }
  return String(e?.stack ?? e);
}

/**
 * expandPlaceholders returns v (JSON) with {node}, {interop} and {workdir}
 * in its strings replaced by this node binary, the interop folder and the
 * session's folder.
 */
function expandPlaceholders(v, workdir) {
  if (typeof v === "string") {
    return v
      .replaceAll("{node}", process.execPath)
      .replaceAll("{interop}", fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, ""))
      .replaceAll("{workdir}", workdir);
  }
  if (Array.isArray(v)) return v.map((x) => expandPlaceholders(x, workdir));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, expandPlaceholders(x, workdir)]));
  return v;
}

/** tapWritable forwards SDK messages to inner after showing each to wire.outgoing. */
function tapWritable(inner, wire) {
  return new WritableStream({
    async write(message) {
      wire.outgoing(message);
      const w = inner.getWriter();
      try {
        await w.write(message);
      } finally {
        w.releaseLock();
      }
    },
  });
}

/**
 * runSteps speaks ACP over (toChild, fromChild) with the SDK's client app
 * and runs steps in order, stopping at the first failed step (its error goes
 * to errors). It always calls closeAgent() (which ends the agent's stdin and
 * waits for its exit) before closing the connection, so the agent's stdout is
 * read to EOF.
 */
export async function runSteps({ steps, toChild, fromChild, workdir, recorder, wire, errors, warnings, report, closeAgent, elicitationAnswers = [] }) {
  const ndjson = ndJsonStream(toChild, fromChild);
  const stream = { readable: ndjson.readable, writable: tapWritable(ndjson.writable, wire) };

  const app = client({ name: CLIENT_NAME })
    .onNotification(methods.client.session.update, ({ params }) => {
      recorder.add(params);
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      const option = params.options.find((o) => o.kind === "allow_once");
      recorder.permissionRequests.push({
        toolCallId: params.toolCall?.toolCallId ?? null,
        title: params.toolCall?.title ?? null,
        optionKinds: params.options.map((o) => o.kind),
        chosen: option?.optionId ?? null,
      });
      if (!option) {
        errors.push(`permission: request for ${params.toolCall?.toolCallId} has no allow_once option`);
        return { outcome: { outcome: "cancelled" } };
      }
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    })
    .onRequest(methods.client.elicitation.create, ({ params }) => {
      // Only reached for a client that advertised elicitation (an
      // initialize step with elicitation: true); the SDK has parsed the
      // params against its schema. The answers are given in order.
      recorder.elicitationRequests.push(params);
      const answer = elicitationAnswers.shift();
      if (!answer) {
        errors.push(`elicitation: request for ${params.toolCallId ?? params.requestId} with no scripted answer`);
        return { action: "cancel" };
      }
      return answer;
    })
    .onRequest("*", ({ method }) => {
      errors.push(`protocol: agent sent request ${method}, which this client did not advertise`);
      throw RequestError.methodNotFound(method);
    })
    .onNotification("*", ({ method }) => {
      warnings.push(`protocol: agent sent unhandled notification ${method}`);
    });

  // connect (not connectWith): connectWith fails its op when the agent closes
  // stdout first, which is exactly what a clean shutdown does here.
  const conn = app.connect(stream);
  const ctx = conn.agent;
  {
    let sessionId = null;
    let promptIndex = 0;
    try {
      for (const [i, step] of steps.entries()) {
        const label = `step ${i + 1} (${step.op})`;
        try {
          switch (step.op) {
            case "initialize": {
              const res = await ctx.request(methods.agent.initialize, {
                protocolVersion: PROTOCOL_VERSION,
                clientCapabilities: {
                  ...(step.terminalOutput ? { _meta: { terminal_output: true } } : {}),
                  ...(step.elicitation ? { elicitation: { form: {} } } : {}),
                },
                clientInfo: { name: step.clientName ?? CLIENT_NAME, version: CLIENT_VERSION },
              });
              report.protocolVersion = res.protocolVersion;
              report.agentInfo = res.agentInfo ?? null;
              if (res.protocolVersion !== PROTOCOL_VERSION) {
                errors.push(`${label}: agent answered protocolVersion ${res.protocolVersion}, client speaks ${PROTOCOL_VERSION}`);
              }
              break;
            }
            case "newSession": {
              const mcpServers = expandPlaceholders(step.mcpServers ?? [], workdir);
              const res = await ctx.request(methods.agent.session.new, { cwd: workdir, mcpServers });
              sessionId = res.sessionId;
              report.sessionIds.push(sessionId);
              report.newSessionConfigOptions = res.configOptions ?? null;
              break;
            }
            case "setConfigOption": {
              if (sessionId === null) {
                throw new Error("setConfigOption before newSession");
              }
              const res = await ctx.request(methods.agent.session.setConfigOption, {
                sessionId,
                configId: step.configId,
                value: step.value,
              });
              (report.configResponses ??= []).push({ configId: step.configId, value: step.value, configOptions: res.configOptions });
              break;
            }
            case "prompt": {
              if (sessionId === null) {
                throw new Error("prompt before newSession");
              }
              recorder.beginPrompt(promptIndex);
              let stopReason = null;
              try {
                const res = await ctx.request(methods.agent.session.prompt, {
                  sessionId,
                  prompt: [{ type: "text", text: step.text }],
                });
                stopReason = res.stopReason;
              } finally {
                await flush();
                recorder.endPrompt(stopReason);
                promptIndex++;
              }
              break;
            }
            default:
              throw new Error(`unknown op ${JSON.stringify(step.op)}`);
          }
        } catch (e) {
          errors.push(`${label}: ${describeError(e)}`);
          return;
        }
      }
    } finally {
      await closeAgent();
      await flush();
      conn.close();
    }
  }
}
