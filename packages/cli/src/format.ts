import type { EventRecord } from "@opencomputer/runtime";

const MAX = 160;

function short(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > MAX ? `${text.slice(0, MAX - 1)}…` : text;
}

/** One event as a line a person can scan. */
export function formatEvent(e: EventRecord): string {
  const d = (e.data ?? {}) as Record<string, unknown>;
  const head = `${String(e.seq).padStart(4)}  ${e.type.padEnd(24)}`;
  switch (e.type) {
    case "message.completed":
      return `${head}${short(d.text)}`;
    case "tool.started":
      return `${head}${String(d.tool)} ${short(d.input)}`;
    case "tool.completed":
      return `${head}${String(d.tool)}${d.result ? " (result)" : ""} → ${short(d.output)}`;
    case "tool.failed":
      return `${head}${String(d.tool)}: ${short(d.message)}${d.settledBy ? ` [${String(d.settledBy)}]` : ""}`;
    case "tool.progress":
      return `${head}${String(d.tool)} ${short(d.metadata)}`;
    case "session.status_changed":
      return `${head}${String(d.from)} → ${String(d.to)}`;
    case "agent.rendered":
      return `${head}model ${String(d.model)}, tools [${(d.enabledTools as string[]).join(", ")}]`;
    case "turn.failed":
      return `${head}${String(d.code)}: ${short(d.message)}`;
    case "usage.recorded":
      return `${head}${String(d.model)} in ${String(d.inputTokens)} out ${String(d.outputTokens)}`;
    default:
      return `${head}${Object.keys(d).length ? short(d) : ""}`;
  }
}
