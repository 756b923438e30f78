import type { UseAgentResult } from "@opencomputer/react";
import { type FormEvent, useState } from "react";

/** The open question: one button per option, and a text box for any other answer. */
export function QuestionBox({ agent }: { agent: UseAgentResult }) {
  const question = agent.question!;
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  async function answer(a: { value?: string; text?: string }) {
    setBusy(true);
    setFailure(null);
    try {
      await agent.answer(a);
      setText("");
    } catch (e) {
      setFailure((e as Error).message);
    } finally {
      setBusy(false);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (text.trim()) void answer({ text: text.trim() });
  }

  return (
    <section className="question" aria-labelledby="question-title" data-testid="question">
      <h2 id="question-title" className="eyebrow">
        The agent asks
      </h2>
      <p className="question-text">{question.text}</p>
      {question.options.length > 0 && (
        <div className="options">
          {question.options.map((o) => (
            <button
              key={o.value}
              type="button"
              disabled={busy}
              onClick={() => void answer({ value: o.value, text: o.label })}
            >
              {o.label}
            </button>
          ))}
        </div>
      )}
      <form onSubmit={submit} className="answer-form">
        <label htmlFor="answer-text" className="visually-hidden">
          Your answer
        </label>
        <input
          id="answer-text"
          value={text}
          placeholder={question.options.length ? "Or type another answer" : "Your answer"}
          onChange={(e) => setText(e.target.value)}
        />
        <button type="submit" disabled={busy || !text.trim()}>
          Answer
        </button>
      </form>
      {failure && (
        <p className="error" role="alert">
          {failure}
        </p>
      )}
    </section>
  );
}
