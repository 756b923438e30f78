import { type Render, renderChange } from "@opencomputer/react";
import { diffLines } from "diff";
import { clock } from "./format.ts";

/**
 * Every render of the agent (one per model step): its instructions, model and tools, and what
 * changed from the render before it, as the platform's inspector shows them.
 */
export function RendersPanel({ renders }: { renders: Render[] }) {
  return (
    <section className="panel" aria-labelledby="renders-title">
      <h2 id="renders-title">Renders</h2>
      {renders.length === 0 ? (
        <p className="muted small">No renders yet. The agent is rendered before each model step.</p>
      ) : (
        <ol className="renders" data-testid="renders">
          {renders.map((r, i) => (
            <li key={r.renderId} data-render={r.number}>
              <RenderItem render={r} previous={renders[i - 1]} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function RenderItem({ render, previous }: { render: Render; previous: Render | undefined }) {
  const change = renderChange(previous, render);
  const summary = !change
    ? "first render"
    : change.model ||
        change.toolsAdded.length ||
        change.toolsRemoved.length ||
        change.instructionsChanged
      ? "changed"
      : "no change";
  return (
    <details>
      <summary>
        Render {render.number} <span className="muted small">· {summary}</span>
      </summary>
      <dl className="facts">
        <dt>When</dt>
        <dd>{clock(render.renderedAt)}</dd>
        <dt>Model</dt>
        <dd>
          {render.model ?? "none chosen"}
          {render.modelSource && (
            <span className="muted small"> ({MODEL_SOURCE[render.modelSource]})</span>
          )}
        </dd>
        <dt>Tools</dt>
        <dd>{render.tools.length ? render.tools.join(", ") : "none"}</dd>
        {ATTACHED.map(([field, label]) =>
          render[field].length > 0 ? (
            <Fact key={field} label={label} value={render[field].join(", ")} />
          ) : null,
        )}
      </dl>
      {change && summary === "changed" && (
        <div className="render-change" data-testid="render-change">
          <h3>Changed from render {render.number - 1}</h3>
          <ul>
            {change.model && (
              <li>
                Model: {change.model.from ?? "none"} → {change.model.to ?? "none"}
              </li>
            )}
            {change.toolsAdded.length > 0 && <li>Tools added: {change.toolsAdded.join(", ")}</li>}
            {change.toolsRemoved.length > 0 && (
              <li>Tools removed: {change.toolsRemoved.join(", ")}</li>
            )}
            {change.instructionsChanged && <li>Instructions changed:</li>}
          </ul>
          {change.instructionsChanged && previous && (
            <pre className="diff">
              {diffLines(previous.instructions, render.instructions).map((part, i) => (
                <span
                  // biome-ignore lint/suspicious/noArrayIndexKey: a diff's parts never reorder
                  key={i}
                  className={part.added ? "diff-add" : part.removed ? "diff-del" : "diff-same"}
                >
                  {prefixLines(part.value, part.added ? "+ " : part.removed ? "- " : "  ")}
                </span>
              ))}
            </pre>
          )}
        </div>
      )}
      <h3>Instructions</h3>
      <pre className="json">{render.instructions}</pre>
    </details>
  );
}

const MODEL_SOURCE = {
  agent: "chosen by the agent",
  default: "the default",
  override: "an override",
} as const;

/** What a render attached besides its tools, shown only when it attached any. */
const ATTACHED = [
  ["mcpServers", "MCP servers"],
  ["skills", "Skills"],
  ["subagents", "Subagents"],
  ["connections", "Connections"],
] as const;

function Fact({ label, value }: { label: string; value: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </>
  );
}

/** Marks every line of a diff part, so the change reads without colour too. */
function prefixLines(text: string, prefix: string): string {
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  return `${lines.map((l) => prefix + l).join("\n")}\n`;
}
