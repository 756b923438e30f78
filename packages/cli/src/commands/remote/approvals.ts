import { OpenComputerError } from "@opencomputer/agent";
import { json, need, noExtra, out, parse } from "../../args.ts";
import { type ApiClient, seg } from "../../client.ts";

export const APPROVALS_USAGE = `opencomputer approvals list <sessionId> [--json]
  opencomputer approvals approve <approvalId> [--by name] [--json]
  opencomputer approvals deny <approvalId> [--by name] [--json]`;

interface Approval {
  id: string;
  turnId: string;
  tool: string;
  status: string;
  createdAt: string;
}

export async function approvalsRemote(client: () => ApiClient, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "list") {
    const usage = "opencomputer approvals list <sessionId> [--json]";
    const { values, positionals } = parse(rest, { json: { type: "boolean" } });
    const id = need(positionals, 0, "the session id", usage);
    noExtra(positionals, 1, usage);
    const listed = await client().get<{ approvals: Approval[] }>(`/sessions/${seg(id)}/approvals`);
    if (values.json) {
      json(listed);
      return 0;
    }
    if (listed.approvals.length === 0) out("no approvals");
    for (const a of listed.approvals)
      out(`${a.id}  ${a.status.padEnd(11)} ${a.tool}  turn ${a.turnId}  ${a.createdAt}`);
    return 0;
  }
  if (sub === "approve" || sub === "deny") {
    const usage = `opencomputer approvals ${sub} <approvalId> [--by name] [--json]`;
    const { values, positionals } = parse(rest, {
      by: { type: "string" },
      json: { type: "boolean" },
    });
    const id = need(positionals, 0, "the approval id", usage);
    noExtra(positionals, 1, usage);
    const decided = await client().post<{ approval: Approval }>(`/approvals/${seg(id)}/decision`, {
      decision: sub,
      ...(values.by ? { decidedBy: values.by } : {}),
    });
    if (values.json) json(decided);
    else out(`approval ${decided.approval.id} ${decided.approval.status}`);
    return 0;
  }
  throw new OpenComputerError(
    "usage",
    `Unknown subcommand "approvals ${sub ?? ""}". Usage:\n  ${APPROVALS_USAGE}`,
  );
}
