import { json, need, noExtra, out, parse } from "../../args.ts";
import { type ApiClient, seg } from "../../client.ts";

export const WEBHOOKS_USAGE = `opencomputer webhooks create <name> --agent <id> [--environment development|production]
  opencomputer webhooks list [--agent <id>] [--environment E] [--json]
  opencomputer webhooks enable|disable|rotate-token|remove|requests <webhookId>`;

interface Webhook {
  id: string;
  name: string;
  agentId: string;
  environment: string;
  enabled: boolean;
  url: string;
}

const line = (w: Webhook, base: string) =>
  `${w.id}  ${w.name}  ${w.agentId}@${w.environment}  ${w.enabled ? "enabled" : "disabled"}  ${base}${w.url}`;

/** `create` and `rotate-token` print the URL with its token: the only time it is shown. */
export async function webhooksRemote(client: () => ApiClient, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parse(rest, {
    agent: { type: "string" },
    environment: { type: "string" },
    json: { type: "boolean" },
  });
  const api = () => client();
  if (sub === "create") {
    const usage = "opencomputer webhooks create <name> --agent <id> [--environment E]";
    const name = need(positionals, 0, "the webhook name", usage);
    noExtra(positionals, 1, usage);
    const created = await api().post<{ webhook: Webhook; url: string }>("/webhooks", {
      name,
      agentId: values.agent,
      environment: values.environment ?? "production",
    });
    if (values.json) json(created);
    else {
      out(line(created.webhook, api().url));
      out(`URL (shown once, it carries the token): ${api().url}${created.url}`);
    }
    return 0;
  }
  if (sub === "list") {
    noExtra(positionals, 0, "opencomputer webhooks list [--agent <id>] [--environment E] [--json]");
    const query = new URLSearchParams();
    if (values.agent) query.set("agent", values.agent);
    if (values.environment) query.set("environment", values.environment);
    const qs = query.size > 0 ? `?${query}` : "";
    const { webhooks } = await api().get<{ webhooks: Webhook[] }>(`/webhooks${qs}`);
    if (values.json) json({ webhooks });
    else if (webhooks.length === 0) out("no webhooks");
    else for (const w of webhooks) out(line(w, api().url));
    return 0;
  }
  const usage = WEBHOOKS_USAGE;
  const id = need(positionals, 0, "the webhook id", usage);
  noExtra(positionals, 1, usage);
  const path = `/webhooks/${seg(id)}`;
  switch (sub) {
    case "enable":
    case "disable": {
      const { webhook } = await api().post<{ webhook: Webhook }>(`${path}/${sub}`);
      out(line(webhook, api().url));
      return 0;
    }
    case "rotate-token": {
      const rotated = await api().post<{ webhook: Webhook; url: string }>(`${path}/rotate-token`);
      out(`URL (shown once; the previous one stopped working): ${api().url}${rotated.url}`);
      return 0;
    }
    case "remove":
      await api().request("DELETE", path);
      out(`removed ${id}`);
      return 0;
    case "requests": {
      const { requests } = await api().get<{ requests: Record<string, unknown>[] }>(
        `${path}/requests`,
      );
      if (values.json) json({ requests });
      else
        for (const r of requests)
          out(`${r.id}  ${r.outcome}  ${r.sessionId ?? "-"}  ${r.receivedAt}`);
      return 0;
    }
    default:
      out(`Usage: ${WEBHOOKS_USAGE}`);
      return 2;
  }
}
