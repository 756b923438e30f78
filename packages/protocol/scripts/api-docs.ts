// Writes the events and records sections of docs/api.md from the protocol, between marker
// comments. `npm run docs:api` rewrites them; packages/protocol/test/api-docs.test.ts fails when
// the file and the protocol disagree, so the reference cannot drift from what is checked.

import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  approvalViewShape,
  EVENT_FAMILIES,
  resultRecordShape,
  sessionListRowShape,
  sessionViewShape,
  turnViewShape,
} from "../src/index.ts";
import { approvalCardShape, decisionShape } from "../src/records/approval.ts";
import {
  eventDeliveryRecordShape,
  eventDeliveryShape,
  eventSubscriptionShape,
} from "../src/records/event-delivery.ts";
import { agentInputShape } from "../src/records/input.ts";
import {
  memoryBindingViewShape,
  memoryDocumentMetaShape,
  memoryDocumentShape,
  memoryResourceShape,
  memorySourceShape,
  memoryWriterShape,
} from "../src/records/memory.ts";
import {
  openQuestionShape,
  runtimeStateShape,
  sessionResultShape,
  turnErrorShape,
} from "../src/records/session.ts";
import {
  scheduleRunShape,
  webhookRecordShape,
  webhookRequestShape,
} from "../src/records/triggers.ts";
import { budgetShape, usageReportShape, usageTotalsShape } from "../src/records/usage.ts";
import type { Shape } from "../src/shape.ts";

export const API_DOC = fileURLToPath(new URL("../../../docs/api.md", import.meta.url));

const cell = (text: string) => `\`${text.replaceAll("|", "\\|")}\``;

export function eventsSection(): string {
  const lines = ["| family | type | `data` |", "| ------ | ---- | ------ |"];
  for (const [family, events] of Object.entries(EVENT_FAMILIES)) {
    for (const [type, shape] of Object.entries(events as Record<string, Shape<unknown>>)) {
      lines.push(`| ${family} | \`${type}\` | ${cell(shape.describe())} |`);
    }
  }
  return lines.join("\n");
}

const RECORDS: Array<[string, Shape<unknown>]> = [
  ["Session (`GET /sessions/<id>`)", sessionViewShape],
  ["Session list row (`GET /sessions`)", sessionListRowShape],
  ["Turn", named(turnViewShape)],
  ["TurnError", named(turnErrorShape)],
  ["SessionResult (`session.result`)", named(sessionResultShape)],
  ["AgentInput", named(agentInputShape)],
  ["Question (`session.question`)", named(openQuestionShape)],
  ["Computer (`session.runtime`)", named(runtimeStateShape)],
  ["Approval (`GET /approvals/<id>`)", approvalViewShape],
  ["ApprovalCard", named(approvalCardShape)],
  ["Decision", named(decisionShape)],
  ["Result record", resultRecordShape],
  ["MemoryBinding (`session.memory`)", named(memoryBindingViewShape)],
  ["Memory document (`GET /projects/<p>/memory/<r>/documents/<id>`)", memoryDocumentShape],
  ["Memory document list row", memoryDocumentMetaShape],
  ["MemoryWriter", named(memoryWriterShape)],
  ["Memory resource (`GET /projects/<p>/memory`)", memoryResourceShape],
  ["MemorySource", named(memorySourceShape)],
  ["Schedule run (`GET /schedule-runs/<id>`)", scheduleRunShape],
  ["Webhook (`GET /webhooks/<id>`)", webhookRecordShape],
  ["Webhook request", webhookRequestShape],
  ["Event delivery body (HTTPS POST)", eventDeliveryShape],
  ["Event subscription (`GET /event-subscriptions/<id>`)", eventSubscriptionShape],
  ["Event delivery record (`…/deliveries/<id>`)", eventDeliveryRecordShape],
  ["Budget (`session.budget`)", named(budgetShape)],
  ["Usage report (`GET /usage`)", usageReportShape],
  ["UsageTotals", named(usageTotalsShape)],
];

/** A named shape describes itself by name; the records table spells it out once. */
function named(shape: Shape<unknown>): Shape<unknown> {
  return {
    ...shape,
    describe: () => (shape as { inner?: Shape<unknown> }).inner?.describe() ?? shape.describe(),
  };
}

export function recordsSection(): string {
  const lines = ["| record | fields |", "| ------ | ------ |"];
  for (const [name, shape] of RECORDS) lines.push(`| ${name} | ${cell(shape.describe())} |`);
  return lines.join("\n");
}

/** Replaces what stands between `<!-- protocol:NAME -->` and `<!-- /protocol:NAME -->`. */
export function withSection(doc: string, name: string, body: string): string {
  const start = `<!-- protocol:${name} -->`;
  const end = `<!-- /protocol:${name} -->`;
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`docs/api.md has no ${start} … ${end} section`);
  return `${doc.slice(0, from + start.length)}\n${body}\n${doc.slice(to)}`;
}

export function generatedApiDoc(doc: string): string {
  return withSection(withSection(doc, "events", eventsSection()), "records", recordsSection());
}

/**
 * The doc as the formatter lays it out (tables padded): compared with table padding removed, so
 * only content counts.
 */
export function sameContent(a: string, b: string): boolean {
  const flat = (text: string) =>
    text
      .split("\n")
      .map((line) => line.replace(/\s+/g, " ").replace(/-{3,}/g, "---").trim())
      .join("\n");
  return flat(a) === flat(b);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(API_DOC, generatedApiDoc(readFileSync(API_DOC, "utf8")));
  // Lay the tables out as `npm run lint` expects.
  const biome = fileURLToPath(new URL("../../../node_modules/.bin/biome", import.meta.url));
  execFileSync(biome, ["format", "--write", API_DOC], { stdio: "ignore" });
}
