import type { UseAgentResult } from "@opencomputer/react";
import { type FormEvent, useState } from "react";

/** Enter sends, Shift+Enter breaks the line; Stop interrupts the running turn. */
export function Composer({ agent }: { agent: UseAgentResult }) {
  const [text, setText] = useState("");
  const [failure, setFailure] = useState<string | null>(null);

  async function submit(event?: FormEvent) {
    event?.preventDefault();
    const value = text.trim();
    if (!value) return;
    setFailure(null);
    try {
      await agent.send(value);
      setText("");
    } catch (e) {
      setFailure((e as Error).message);
    }
  }

  return (
    <form className="composer" onSubmit={submit} aria-label="Send a message">
      <label htmlFor="composer-text" className="visually-hidden">
        Message
      </label>
      <textarea
        id="composer-text"
        rows={2}
        value={text}
        placeholder={
          agent.question
            ? "Answer above, or send a message (held until the answer)"
            : "Message the agent"
        }
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) void submit(e);
        }}
      />
      <div className="actions">
        <button type="submit" className="primary" disabled={!text.trim()}>
          Send
        </button>
        {agent.isRunning && (
          <button type="button" onClick={() => void agent.stop().catch(() => {})}>
            Stop
          </button>
        )}
      </div>
      {failure && (
        <p className="error" role="alert">
          {failure}
        </p>
      )}
    </form>
  );
}
