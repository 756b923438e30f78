import type { SessionEvent } from "@opencomputer/protocol";

const MAX = 160;

function short(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > MAX ? `${text.slice(0, MAX - 1)}…` : text;
}

/** One event as a line a person can scan; types newer than this CLI print their data. */
export function formatEvent(e: SessionEvent): string {
  return `${String(e.seq).padStart(4)}  ${e.type.padEnd(24)}${eventSummary(e)}`;
}

/** What an event says, in a few words (its type's fields; else its data, shortened). */
export function eventSummary(e: SessionEvent): string {
  const head = "";
  switch (e.type) {
    case "message.completed":
      return `${head}${short(e.data.text)}`;
    case "tool.started":
      return `${head}${e.data.tool} ${short(e.data.input)}`;
    case "tool.completed":
      return `${head}${e.data.tool}${e.data.result ? " (result)" : ""} → ${short(e.data.output)}`;
    case "tool.failed": {
      const by = e.data.settledBy ? ` [${e.data.settledBy}]` : "";
      return `${head}${e.data.tool}: ${short(e.data.message)}${by}`;
    }
    case "tool.progress":
      return `${head}${e.data.tool} ${short(e.data.metadata)}`;
    case "session.status_changed":
      return `${head}${e.data.from} → ${e.data.to}`;
    case "agent.rendered":
      return `${head}model ${String(e.data.model)}${modelNote(e.data)}, tools [${e.data.enabledTools.join(", ")}]`;
    case "turn.failed":
      return `${head}${e.data.code}: ${short(e.data.message)}`;
    case "usage.recorded":
      return `${head}${e.data.model} in ${e.data.inputTokens} out ${e.data.outputTokens}${costNote(e.data.costUsd)}`;
    default: {
      const data = (e.data ?? {}) as Record<string, unknown>;
      return `${head}${Object.keys(data).length ? short(data) : ""}`;
    }
  }
}

/** A step's cost; "no price" when the price table does not know the model (never a guess). */
function costNote(cost: number | null | undefined): string {
  if (cost === undefined) return "";
  return cost === null
    ? ", no price"
    : `, $${cost.toFixed(6).replace(/0+$/, "").replace(/\.$/, "")}`;
}

/** Why a render's model is what it is, when it is not simply the agent's choice. */
function modelNote(data: { requestedModel?: string | null; modelSource?: string }): string {
  if (data.modelSource === "default") return " (default: the agent selects none)";
  if (data.modelSource === "override") return ` (replaces ${data.requestedModel ?? "the default"})`;
  return "";
}
