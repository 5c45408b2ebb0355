#!/usr/bin/env node
// Drives a dsh-acp binary with the official ACP TypeScript SDK client over
// stdio and prints one JSON object summarising the run.
//
// usage: node run.mjs <path-to-binary> <scenario-dir> <workdir>
//
// The scenario dir is a replay fixture folder (NNN.sse, input.json, optional
// workspace/). workspace/ is copied into workdir, the binary is started with
// `--replay <scenario-dir>` and DSH_STATE_DIR set to a fresh temp dir, and the
// steps of input.json are run: initialize, newSession, prompt. Permission
// requests are answered allow-once. At the end the child's stdin is closed and
// its exit awaited.
//
// stdout: {stopReasons, thoughts, messages, toolCalls, permissionRequests,
//          elicitationRequests, updateKinds, updatesCount, updatesOutsidePrompt, agentInfo,
//          protocolVersion, sessionIds, errors, warnings, exitCode,
//          exitSignal, stderrTail}
// exit status: 0 when errors is empty and the child exited 0, 1 otherwise,
// 2 on bad usage.
//
// Environment: INTEROP_TIMEOUT_MS (default 60000) bounds the whole run;
// INTEROP_EXIT_TIMEOUT_MS (default 10000) bounds the wait for the child's
// exit after stdin is closed. INTEROP_BASE_URL, when set, makes the child
// talk to that OpenAI-compatible endpoint (`--base-url`, with
// INTEROP_API_KEY as DSH_API_KEY) instead of replaying the scenario;
// INTEROP_AGENT_ARGS (a JSON array of strings) adds arguments;
// INTEROP_ELICITATION is a JSON array of the answers
// (CreateElicitationResponse) to give the agent's elicitation/create
// requests, in order (an initialize step with "elicitation": true
// advertises form elicitation).
//
// Steps: initialize, newSession, prompt {text}, setConfigOption
// {configId, value}; the report adds newSessionConfigOptions,
// configResponses [{configId, value, configOptions}] and usageUpdates.
//
// A newSession step may name mcpServers (ACP McpServer objects); in their
// strings {node} is this node binary, {interop} this folder and {workdir}
// the session's folder.

import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { runSteps } from "./lib/steps.mjs";
import { Recorder } from "./lib/recorder.mjs";
import { WireChecker } from "./lib/wire.mjs";

const STDERR_TAIL = 4000; // characters of the child's stderr kept for the report

function usage() {
  process.stderr.write("usage: node run.mjs <path-to-binary> <scenario-dir> <workdir>\n");
  process.exit(2);
}

function envInt(name, def) {
  const v = Number.parseInt(process.env[name] ?? "", 10);
  return Number.isFinite(v) && v > 0 ? v : def;
}

async function main() {
  const [binArg, scenarioArg, workArg] = process.argv.slice(2);
  if (!binArg || !scenarioArg || !workArg) usage();
  const binary = path.resolve(binArg);
  const scenario = path.resolve(scenarioArg);
  const workdir = path.resolve(workArg);
  const timeoutMs = envInt("INTEROP_TIMEOUT_MS", 60000);
  const exitTimeoutMs = envInt("INTEROP_EXIT_TIMEOUT_MS", 10000);

  const errors = [];
  const warnings = [];
  const recorder = new Recorder(errors);
  const wire = new WireChecker(errors, warnings);
  const report = { scenario: path.basename(scenario), agentInfo: null, protocolVersion: null, sessionIds: [] };

  // The SDK reports dropped notifications and stray responses only with
  // console.error; keep them as errors too.
  const origConsoleError = console.error;
  console.error = (...args) => {
    errors.push(`sdk: ${args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ")}`);
    origConsoleError(...args);
  };

  const input = JSON.parse(readFileSync(path.join(scenario, "input.json"), "utf8"));
  mkdirSync(workdir, { recursive: true });
  const ws = path.join(scenario, "workspace");
  if (existsSync(ws)) {
    cpSync(ws, workdir, { recursive: true });
  }
  const stateDir = mkdtempSync(path.join(tmpdir(), "dsh-interop-state-"));

  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k.startsWith("DSH_") || k === "DEEPSEEK_API_KEY") delete env[k];
  }
  env.DSH_STATE_DIR = stateDir;
  let args = ["--replay", scenario];
  if (process.env.INTEROP_BASE_URL) {
    args = ["--base-url", process.env.INTEROP_BASE_URL];
    env.DSH_API_KEY = process.env.INTEROP_API_KEY ?? "";
  }
  if (process.env.INTEROP_AGENT_ARGS) {
    args.push(...JSON.parse(process.env.INTEROP_AGENT_ARGS));
  }

  const child = spawn(binary, args, { env, cwd: workdir, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d) => {
    stderr = (stderr + d).slice(-STDERR_TAIL);
  });
  const exited = new Promise((resolve) => {
    child.on("error", (e) => {
      errors.push(`spawn: ${e.message}`);
      resolve({ code: null, signal: null });
    });
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  child.stdin.on("error", (e) => errors.push(`child stdin: ${e.message}`));

  // Bytes to the child; the script ends stdin itself once the steps are done.
  const toChild = new WritableStream({
    write(chunk) {
      return new Promise((resolve, reject) => child.stdin.write(chunk, (e) => (e ? reject(e) : resolve())));
    },
  });
  const fromChild = Readable.toWeb(child.stdout).pipeThrough(wire.tapStream());

  // closeAgent ends the child's stdin and waits for it to exit by itself
  // (killing it after exitTimeoutMs); it runs once, whoever calls it first.
  let closing = null;
  const closeAgent = () => {
    closing ??= (async () => {
      child.stdin.end();
      let t;
      let exit = await Promise.race([exited, new Promise((r) => (t = setTimeout(() => r(null), exitTimeoutMs)))]);
      clearTimeout(t);
      if (exit === null) {
        errors.push(`exit: child did not exit within ${exitTimeoutMs} ms of stdin EOF; killed`);
        child.kill("SIGKILL");
        exit = await exited;
      }
      return exit;
    })();
    return closing;
  };

  let timer;
  const timedOut = new Promise((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  const elicitationAnswers = JSON.parse(process.env.INTEROP_ELICITATION || "[]");
  const run = runSteps({ steps: input.steps ?? [], toChild, fromChild, workdir, recorder, wire, errors, warnings, report, closeAgent, elicitationAnswers });
  const outcome = await Promise.race([
    run.then(
      () => "done",
      (e) => {
        errors.push(`run: ${e?.stack ?? e}`);
        return "failed";
      },
    ),
    timedOut,
  ]);
  clearTimeout(timer);
  if (outcome === "timeout") {
    errors.push(`run: timed out after ${timeoutMs} ms`);
  }
  const exit = await closeAgent();
  // After the child's exit its stdout reaches EOF and the connection closes;
  // give the runner a moment to wind down, but do not hang on it.
  await Promise.race([run.catch(() => {}), new Promise((r) => setTimeout(r, 2000).unref())]);
  wire.finish();
  rmSync(stateDir, { recursive: true, force: true });
  console.error = origConsoleError;

  const out = {
    ...report,
    ...recorder.snapshot(),
    errors,
    warnings,
    exitCode: exit.code,
    exitSignal: exit.signal,
    stderrTail: stderr,
  };
  process.stdout.write(JSON.stringify(out) + "\n");
  return errors.length === 0 && exit.code === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`run.mjs: ${e?.stack ?? e}\n`);
    process.stdout.write(JSON.stringify({ errors: [`run.mjs: ${e?.message ?? e}`] }) + "\n");
    process.exitCode = 1;
  },
);
