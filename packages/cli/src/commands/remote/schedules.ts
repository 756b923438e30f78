import { OpenComputerError } from "@opencomputer/agent";
import { json, need, noExtra, out, parse } from "../../args.ts";
import { type ApiClient, seg } from "../../client.ts";

export const SCHEDULES_USAGE = `opencomputer schedules list [--agent <id>] [--json]
  opencomputer schedules run <agent>/<schedule> [--environment development|production]
  opencomputer schedules history <agent>/<schedule> [--environment E] [--status S] [--json]`;

interface Run {
  id: string;
  environment: string;
  intendedAt: string;
  status: string;
  manual: boolean;
  sessionId: string | null;
  error: string | null;
}

const runLine = (r: Run) =>
  `${r.id}  ${r.intendedAt}  ${r.environment}  ${r.status}${r.manual ? " (manual)" : ""}  ${r.sessionId ?? "-"}${r.error ? `  ${r.error}` : ""}`;

function target(positionals: string[], usage: string): string {
  const ref = need(positionals, 0, "<agent>/<schedule>", usage);
  noExtra(positionals, 1, usage);
  const [agent, schedule, ...more] = ref.split("/");
  if (!agent || !schedule || more.length > 0)
    throw new OpenComputerError("usage", `"${ref}" is not <agent>/<schedule>\nUsage: ${usage}`);
  return `/schedules/${seg(agent)}/${seg(schedule)}`;
}

export async function schedulesRemote(client: () => ApiClient, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parse(rest, {
    agent: { type: "string" },
    environment: { type: "string" },
    status: { type: "string" },
    json: { type: "boolean" },
  });
  switch (sub) {
    case "list": {
      noExtra(positionals, 0, SCHEDULES_USAGE);
      const qs = values.agent ? `?agent=${encodeURIComponent(values.agent)}` : "";
      const { schedules } = await client().get<{ schedules: Record<string, unknown>[] }>(
        `/schedules${qs}`,
      );
      if (values.json) json({ schedules });
      else if (schedules.length === 0) out("no schedules");
      else
        for (const s of schedules)
          out(
            `${s.agentId}/${s.id}  "${s.cron}" ${s.timezone}  recurs in: ${(s.enabled as string[]).join(", ") || "none (run-now only)"}`,
          );
      return 0;
    }
    case "run": {
      const path = target(
        positionals,
        "opencomputer schedules run <agent>/<schedule> [--environment E]",
      );
      const { run } = await client().post<{ run: Run }>(`${path}/run`, {
        environment: values.environment ?? "production",
      });
      if (values.json) json({ run });
      else out(runLine(run));
      return 0;
    }
    case "history": {
      const path = target(
        positionals,
        "opencomputer schedules history <agent>/<schedule> [--environment E] [--status S]",
      );
      const query = new URLSearchParams({ limit: "50" });
      if (values.environment) query.set("environment", values.environment);
      if (values.status) query.set("status", values.status);
      const { runs } = await client().get<{ runs: Run[] }>(`${path}/runs?${query}`);
      if (values.json) json({ runs });
      else if (runs.length === 0) out("no runs");
      else for (const r of runs) out(runLine(r));
      return 0;
    }
    default:
      out(`Usage: ${SCHEDULES_USAGE}`);
      return 2;
  }
}
