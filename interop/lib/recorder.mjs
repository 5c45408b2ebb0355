// Recorder: folds the session/update notifications the SDK hands to the client
// into per-prompt text and a merged view of every tool call.

/** Update kinds that belong to a prompt turn (the agent must send them before the prompt's response). */
export const TURN_UPDATE_KINDS = new Set([
  "agent_message_chunk",
  "agent_thought_chunk",
  "tool_call",
  "tool_call_update",
  "plan",
]);

/**
 * Recorder collects parsed session updates.
 *
 * Prompts are numbered from 0 in the order the script sends them; an update
 * that arrives while no prompt is in flight is counted but attributed to none.
 */
export class Recorder {
  constructor(errors) {
    this.errors = errors;
    this.current = -1; // index of the prompt in flight, -1 when none
    this.thoughts = [];
    this.messages = [];
    this.stopReasons = [];
    this.toolCalls = new Map(); // toolCallId -> merged state, insertion order = first sighting
    this.updateKinds = {};
    this.updatesCount = 0;
    this.outsidePrompt = 0;
    this.permissionRequests = [];
    this.usageUpdates = []; // {prompt, used, size, cost} per usage_update
    this.elicitationRequests = [];
  }

  /** beginPrompt opens prompt number index (0-based). */
  beginPrompt(index) {
    this.current = index;
    this.thoughts[index] = "";
    this.messages[index] = "";
  }

  /** endPrompt records the stop reason of the prompt in flight and closes it. */
  endPrompt(stopReason) {
    this.stopReasons[this.current] = stopReason;
    this.current = -1;
  }

  /** add folds one SDK-validated SessionNotification. */
  add(notification) {
    const update = notification.update;
    const kind = update.sessionUpdate;
    this.updatesCount++;
    this.updateKinds[kind] = (this.updateKinds[kind] ?? 0) + 1;
    const p = this.current;
    if (p < 0) {
      this.outsidePrompt++;
    }
    switch (kind) {
      case "agent_message_chunk":
      case "agent_thought_chunk": {
        if (update.content?.type !== "text") {
          this.errors.push(`recorder: ${kind} with non-text content type ${JSON.stringify(update.content?.type)}`);
          return;
        }
        if (p < 0) {
          return; // counted above; the wire check reports it as out of turn
        }
        if (kind === "agent_message_chunk") {
          this.messages[p] += update.content.text;
        } else {
          this.thoughts[p] += update.content.text;
        }
        return;
      }
      case "tool_call":
        this.#toolCall(update, p, true);
        return;
      case "tool_call_update":
        this.#toolCall(update, p, false);
        return;
      case "usage_update":
        this.usageUpdates.push({ prompt: p, used: update.used, size: update.size, cost: update.cost ?? null });
        return;
      default:
        return;
    }
  }

  #toolCall(update, prompt, isStart) {
    const { sessionUpdate, ...fields } = update;
    const id = fields.toolCallId;
    let card = this.toolCalls.get(id);
    if (isStart && card) {
      this.errors.push(`protocol: tool_call ${id} announced twice`);
    }
    if (!isStart && !card) {
      this.errors.push(`protocol: tool_call_update for unknown toolCallId ${id} (no tool_call before it)`);
    }
    if (!card) {
      card = { toolCallId: id, prompt, updates: 0 };
      this.toolCalls.set(id, card);
    }
    card.updates++;
    for (const [k, v] of Object.entries(fields)) {
      if (v !== undefined) {
        card[k] = v;
      }
    }
  }

  /** snapshot returns the plain-object form printed by run.mjs. */
  snapshot() {
    return {
      stopReasons: this.stopReasons,
      thoughts: this.thoughts,
      messages: this.messages,
      toolCalls: [...this.toolCalls.values()],
      permissionRequests: this.permissionRequests,
      elicitationRequests: this.elicitationRequests,
      updateKinds: this.updateKinds,
      updatesCount: this.updatesCount,
      updatesOutsidePrompt: this.outsidePrompt,
      usageUpdates: this.usageUpdates,
    };
  }
}
