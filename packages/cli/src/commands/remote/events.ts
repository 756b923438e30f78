// `opencomputer events …`: event subscriptions (HTTPS destinations for turn outcomes) and their
// delivery records on a running server. `create` and `rotate-secret` print the signing secret,
// the only time it is shown.
import { OpenComputerError } from "@opencomputer/agent";
import { integer, json, need, noExtra, out, parse } from "../../args.ts";
import { type ApiClient, seg } from "../../client.ts";

export const EVENTS_USAGE = `opencomputer events create <https-url> [--environment development|production] [--agent <id>] [--events turn.completed,turn.failed,turn.cancelled]
  opencomputer events list [--environment E] [--agent <id>] [--json]
  opencomputer events get|pause|resume|rotate-secret|remove <subscriptionId>
  opencomputer events deliveries <subscriptionId> [--status pending|delivered|failed] [--session <id>] [--limit N] [--after <deliveryId>] [--json]
  opencomputer events delivery <subscriptionId> <deliveryId>
  opencomputer events replay <subscriptionId> (--delivery <id>[,<id>…] | --session <id> [--from N] [--to N] | --since ISO [--until ISO]) [--limit N]`;

interface Subscription {
  id: string;
  environment: string;
  agentId: string | null;
  events: string[];
  destination: { url: string };
  status: string;
}

interface Delivery {
  id: string;
  eventType: string;
  sessionId: string;
  sequence: number;
  status: string;
  attempt: number;
  responseStatus: number | null;
  error: string | null;
  replayOf: string | null;
}

const subLine = (s: Subscription) =>
  `${s.id}  ${s.status}  ${s.agentId ?? "*"}@${s.environment}  ${s.events.join(",")}  ${s.destination.url}`;

const deliveryLine = (d: Delivery) =>
  `${d.id}  ${d.status}  ${d.eventType}  ${d.sessionId}#${d.sequence}  attempt ${d.attempt}  ${d.responseStatus ?? "-"}  ${d.error ?? ""}${d.replayOf ? `  replay of ${d.replayOf}` : ""}`;

const OPTIONS = {
  environment: { type: "string" },
  agent: { type: "string" },
  events: { type: "string" },
  status: { type: "string" },
  session: { type: "string" },
  limit: { type: "string" },
  after: { type: "string" },
  delivery: { type: "string" },
  from: { type: "string" },
  to: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
  json: { type: "boolean" },
} as const;

/** The replay selection from the options; the server checks the rest. */
function replayBody(values: Record<string, string | boolean | undefined>) {
  const str = (name: string) => values[name] as string | undefined;
  const limit = integer(str("limit"), "limit", 1);
  const body: Record<string, unknown> = limit !== undefined ? { limit } : {};
  if (str("delivery")) body.deliveryIds = str("delivery")!.split(",").filter(Boolean);
  if (str("session")) body.sessionId = str("session");
  const from = integer(str("from"), "from", 0);
  const to = integer(str("to"), "to", 0);
  if (from !== undefined) body.fromSequence = from;
  if (to !== undefined) body.toSequence = to;
  if (str("since")) body.since = str("since");
  if (str("until")) body.until = str("until");
  return body;
}

export async function eventsRemote(client: () => ApiClient, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parse(rest, OPTIONS, EVENTS_USAGE);
  const api = () => client();
  const print = (value: unknown, line: () => void) => (values.json ? json(value) : line());
  if (sub === "create") {
    const usage =
      "opencomputer events create <https-url> [--environment E] [--agent <id>] [--events …]";
    const url = need(positionals, 0, "the destination URL", usage);
    noExtra(positionals, 1, usage);
    const created = await api().post<{ subscription: Subscription; signingSecret: string }>(
      "/event-subscriptions",
      {
        environment: values.environment ?? "production",
        ...(values.agent ? { agentId: values.agent } : {}),
        events: (values.events ?? "turn.completed,turn.failed,turn.cancelled").split(","),
        destination: { type: "https", url },
      },
    );
    print(created, () => {
      out(subLine(created.subscription));
      out(`Signing secret (shown once): ${created.signingSecret}`);
    });
    return 0;
  }
  if (sub === "list") {
    noExtra(positionals, 0, EVENTS_USAGE);
    const query = new URLSearchParams();
    if (values.environment) query.set("environment", values.environment);
    if (values.agent) query.set("agentId", values.agent);
    const qs = query.size > 0 ? `?${query}` : "";
    const { subscriptions } = await api().get<{ subscriptions: Subscription[] }>(
      `/event-subscriptions${qs}`,
    );
    print({ subscriptions }, () => {
      if (subscriptions.length === 0) out("no event subscriptions");
      for (const s of subscriptions) out(subLine(s));
    });
    return 0;
  }
  const id = need(positionals, 0, "the subscription id", EVENTS_USAGE);
  const path = `/event-subscriptions/${seg(id)}`;
  if (sub === "delivery") {
    const deliveryId = need(positionals, 1, "the delivery id", EVENTS_USAGE);
    noExtra(positionals, 2, EVENTS_USAGE);
    const { delivery } = await api().get<{ delivery: Delivery }>(
      `${path}/deliveries/${seg(deliveryId)}`,
    );
    print({ delivery }, () => out(deliveryLine(delivery)));
    return 0;
  }
  noExtra(positionals, 1, EVENTS_USAGE);
  switch (sub) {
    case "get":
    case "pause":
    case "resume": {
      const answer =
        sub === "get"
          ? await api().get<{ subscription: Subscription }>(path)
          : await api().post<{ subscription: Subscription }>(`${path}/${sub}`);
      print(answer, () => out(subLine(answer.subscription)));
      return 0;
    }
    case "rotate-secret": {
      const rotated = await api().post<{ subscription: Subscription; signingSecret: string }>(
        `${path}/rotate-secret`,
      );
      print(rotated, () =>
        out(
          `New signing secret (shown once; the previous one also signs for 24 hours): ${rotated.signingSecret}`,
        ),
      );
      return 0;
    }
    case "remove":
      // 204 No Content: read through `conditional`, which accepts an empty body.
      await api().conditional("DELETE", path, {});
      out(`removed ${id}`);
      return 0;
    case "deliveries": {
      const query = new URLSearchParams();
      if (values.status) query.set("status", values.status);
      if (values.session) query.set("sessionId", values.session);
      if (values.limit) query.set("limit", values.limit);
      if (values.after) query.set("after", values.after);
      const qs = query.size > 0 ? `?${query}` : "";
      const page = await api().get<{ deliveries: Delivery[]; nextCursor?: string }>(
        `${path}/deliveries${qs}`,
      );
      print(page, () => {
        if (page.deliveries.length === 0) out("no deliveries");
        for (const d of page.deliveries) out(deliveryLine(d));
        if (page.nextCursor) out(`more: --after ${page.nextCursor}`);
      });
      return 0;
    }
    case "replay": {
      const { deliveries } = await api().post<{ deliveries: Delivery[] }>(
        `${path}/replay`,
        replayBody(values),
      );
      print({ deliveries }, () => {
        for (const d of deliveries) out(deliveryLine(d));
      });
      return 0;
    }
    default:
      throw new OpenComputerError(
        "usage",
        `Unknown events command "${sub}". Usage: ${EVENTS_USAGE}`,
      );
  }
}
