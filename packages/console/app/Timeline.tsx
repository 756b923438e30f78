import type { TimelineItem, UseAgentResult } from "@opencomputer/react";
import { ApprovalCard } from "./ApprovalCard.tsx";
import { pretty } from "./format.ts";

/** The event log as a conversation, in log order; `aria-live` announces what arrives. */
export function Timeline({ agent }: { agent: UseAgentResult }) {
  if (agent.items.length === 0) {
    return <p className="empty">Nothing here yet. Send the agent a message below.</p>;
  }
  return (
    <ol className="timeline" aria-live="polite" aria-label="Conversation">
      {agent.items.map((item) => (
        <li key={item.key} data-kind={item.kind} data-key={item.key}>
          <Item item={item} agent={agent} />
        </li>
      ))}
      {agent.isRunning && (
        <li className="working muted small" aria-hidden="true">
          working…
        </li>
      )}
    </ol>
  );
}

function Item({ item, agent }: { item: TimelineItem; agent: UseAgentResult }) {
  switch (item.kind) {
    case "user":
      return (
        <div className="bubble user">
          <span className="who">{item.input.answer ? "You answered" : "You"}</span>
          <p>{item.text || <span className="muted">(payload)</span>}</p>
        </div>
      );
    case "assistant":
      return (
        <div className="bubble assistant" aria-busy={item.streaming}>
          <span className="who">Agent{item.streaming ? " · writing" : ""}</span>
          <p>{item.text}</p>
        </div>
      );
    case "tool":
      return <ToolCall item={item} />;
    case "question":
      return (
        <div className="note">
          Asked: “{item.text}”{" "}
          <span className="muted small">{item.answered ?? "waiting for an answer"}</span>
        </div>
      );
    case "approval": {
      const approval = agent.approvals.find((a) => a.id === item.approvalId);
      return approval ? <ApprovalCard approval={approval} agent={agent} /> : null;
    }
    case "turn":
      return (
        <div
          className={`turn-end ${item.status}`}
          role={item.status === "failed" ? "alert" : undefined}
        >
          <strong>{item.status === "failed" ? "Turn failed" : "Turn cancelled"}</strong>{" "}
          <code>{item.code}</code>
          {item.message ? <span> — {item.message}</span> : null}
        </div>
      );
    case "notice":
      return <div className="note muted">{item.text}</div>;
  }
}

function ToolCall({ item }: { item: Extract<TimelineItem, { kind: "tool" }> }) {
  const label =
    item.status === "running"
      ? "running"
      : item.status === "failed"
        ? "failed"
        : item.result
          ? "result"
          : "done";
  return (
    <details
      className={`tool tool-${item.status}`}
      open={item.status !== "completed" || item.result}
    >
      <summary>
        <span className="tool-name">{item.title}</span>
        <span className={`chip chip-${label}`}>{label}</span>
        {item.progress.length > 0 && item.status === "running" && (
          <span className="muted small">{item.progress.length} updates</span>
        )}
      </summary>
      <div className="tool-body">
        {item.subagent && <SubagentLink link={item.subagent} />}
        <h3>Input</h3>
        <pre className="json">{pretty(item.input)}</pre>
        {item.progress.length > 0 && (
          <>
            <h3>Progress</h3>
            <ol className="progress" data-testid="progress">
              {item.progress.map((p, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: progress entries only ever append
                <li key={i}>{pretty(p)}</li>
              ))}
            </ol>
          </>
        )}
        {item.status === "completed" && (
          <>
            <h3>{item.result ? `Committed result (turn ${item.turnId ?? "?"})` : "Output"}</h3>
            <pre className="json" data-testid="tool-output">
              {pretty(item.output)}
            </pre>
          </>
        )}
        {item.status === "failed" && (
          <p className="error">
            {item.message}
            {item.settledBy ? <span className="muted"> (settled by {item.settledBy})</span> : null}
          </p>
        )}
      </div>
    </details>
  );
}

/** A delegation call's child session, linked, and the person it waits for. */
function SubagentLink({
  link,
}: {
  link: NonNullable<Extract<TimelineItem, { kind: "tool" }>["subagent"]>;
}) {
  const { waiting } = link;
  return (
    <p className="subagent" data-testid="subagent-link">
      Delegated to <strong>{link.agentId}</strong>
      <a href={`#/sessions/${link.sessionId}`}>
        <code>{link.sessionId}</code>
      </a>
      {waiting && (
        <span className="chip chip-running" data-testid="subagent-waiting">
          {waiting.reason === "question"
            ? `waiting for an answer${waiting.text ? `: “${waiting.text}”` : ""}`
            : "waiting for an approval"}
          {" — open the child session to decide"}
        </span>
      )}
    </p>
  );
}
