import { type TurnUsage, usageTotal } from "@opencomputer/react";

const tokens = (n: number) => n.toLocaleString("en-US");
const usd = (n: number) => `$${n.toFixed(n !== 0 && n < 0.01 ? 6 : 4)}`;

interface Budget {
  maxCostUsd?: number;
  maxTokens?: number;
}

/**
 * The session's model usage from its log: the total, the budget when it has one, and each
 * turn's tokens and cost. A step without a price is counted apart, never as free.
 */
export function UsagePanel({
  usage,
  turnIds,
  budget,
}: {
  usage: TurnUsage[];
  /** The session's turns in order, to number them as the timeline does. */
  turnIds: string[];
  budget?: Budget | undefined;
}) {
  const total = usageTotal(usage);
  const number = (turnId: string) => {
    const i = turnIds.indexOf(turnId);
    return i === -1 ? turnId : `Turn ${i + 1}`;
  };
  return (
    <section className="panel" aria-labelledby="usage-title" data-testid="usage">
      <h2 id="usage-title">Usage</h2>
      {total.steps === 0 ? (
        <p className="muted small">No model steps yet.</p>
      ) : (
        <>
          <dl className="facts" data-testid="usage-total">
            <dt>Cost</dt>
            <dd>
              {usd(total.costUsd)}
              {total.unpricedSteps > 0 && (
                <span className="muted small" data-testid="usage-unpriced">
                  {" "}
                  + {total.unpricedSteps} step{total.unpricedSteps === 1 ? "" : "s"} without a price
                </span>
              )}
            </dd>
            <dt>Tokens</dt>
            <dd>
              {tokens(total.inputTokens)} in · {tokens(total.outputTokens)} out
            </dd>
            {(total.cacheReadTokens > 0 || total.cacheWriteTokens > 0) && (
              <>
                <dt>Cache</dt>
                <dd>
                  {tokens(total.cacheReadTokens)} read · {tokens(total.cacheWriteTokens)} written
                </dd>
              </>
            )}
            <dt>Steps</dt>
            <dd>{total.steps}</dd>
          </dl>
          <table className="usage-turns" data-testid="usage-turns">
            <thead>
              <tr>
                <th scope="col">Turn</th>
                <th scope="col">Steps</th>
                <th scope="col">In</th>
                <th scope="col">Out</th>
                <th scope="col">Cost</th>
              </tr>
            </thead>
            <tbody>
              {usage.map((t) => (
                <tr key={t.turnId} data-turn={t.turnId}>
                  <th scope="row">{number(t.turnId)}</th>
                  <td>{t.steps}</td>
                  <td>{tokens(t.inputTokens)}</td>
                  <td>{tokens(t.outputTokens)}</td>
                  <td>
                    {usd(t.costUsd)}
                    {t.unpricedSteps > 0 ? "*" : ""}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {budget && (
        <p className="muted small" data-testid="usage-budget">
          Budget:{" "}
          {[
            budget.maxCostUsd !== undefined ? `${usd(budget.maxCostUsd)}` : null,
            budget.maxTokens !== undefined ? `${tokens(budget.maxTokens)} tokens` : null,
          ]
            .filter(Boolean)
            .join(" · ")}
        </p>
      )}
    </section>
  );
}
