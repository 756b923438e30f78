import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Catalog } from "@opencomputer/server";
import { type FixtureServer, KEY, startFixtureServer } from "@opencomputer/testkit/stack";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildConsoleInto } from "./build.ts";
import { ensureChromium } from "./chromium.ts";
import { type CuttingProxy, startCuttingProxy } from "./proxy.ts";

// The console for the person who has to act: what waits for them, ending sessions, labels,
// the inspector (requests through connections, renders), agents and rollback, a narrow
// screen, and the live stream surviving dropped connections.

const repo = resolve(import.meta.dirname, "../../..");
const shots = join(repo, "test-output", "console");
const built = join(repo, "test-output", `console-operate-dist-${process.pid}`);
const COUNT_TO = 24;

// The catalog's shapes as the build package's catalog serves them: aliases, their history
// (oldest first), and the aliases naming each deployment.
const deployments = [
  { id: "dep_bbbbbbbbbbbbbbbbbbbb", agentId: "helper", createdAt: "2026-01-02T00:00:00.000Z" },
  { id: "dep_aaaaaaaaaaaaaaaaaaaa", agentId: "helper", createdAt: "2026-01-01T00:00:00.000Z" },
].map((d) => ({ ...d, tools: [{ name: "lookup_order", kind: "read", result: false }] }));
const [newer, older] = [deployments[0]!.id, deployments[1]!.id];
const aliases: Record<"development" | "production", string> = {
  development: newer,
  production: newer,
};
const history = [
  {
    alias: "development",
    deploymentId: older,
    previous: null,
    at: "2026-01-01T00:00:00.000Z",
    reason: "build",
  },
  {
    alias: "production",
    deploymentId: older,
    previous: null,
    at: "2026-01-01T00:00:00.000Z",
    reason: "build",
  },
  {
    alias: "development",
    deploymentId: newer,
    previous: older,
    at: "2026-01-02T00:00:00.000Z",
    reason: "build",
  },
  {
    alias: "production",
    deploymentId: newer,
    previous: older,
    at: "2026-01-02T00:01:00.000Z",
    reason: "deploy",
  },
];
const helperAgent = () => ({
  id: "helper",
  aliases: { ...aliases },
  deployment: deployments[0],
  history,
});
const naming = (id: string) =>
  (Object.keys(aliases) as Array<keyof typeof aliases>).filter((a) => aliases[a] === id);
/**
 * The catalog behind `GET /agents` and `/deployments`. It starts read-only (no `rollback`), as a
 * server that cannot move aliases; the rollback test then gives it one, which the server's own
 * `POST /agents/<id>/rollback` route calls.
 */
const catalog: Catalog = {
  agents: async () => [
    helperAgent(),
    ...["asker", "approver", "counter", "refunder", "shifter"].map((id) => ({ id })),
  ],
  deployments: async (filter) =>
    deployments
      .filter((d) => !filter?.agentId || d.agentId === filter.agentId)
      .map((d) => ({ ...d, aliases: naming(d.id) })),
  deployment: async (id) => deployments.find((d) => d.id === id)!,
};
const rollbacks: unknown[] = [];
function acceptRollbacks() {
  catalog.rollback = async (agentId, alias, to) => {
    rollbacks.push({ agentId, alias, to });
    history.push({
      alias,
      deploymentId: to!,
      previous: aliases[alias],
      at: new Date().toISOString(),
      reason: "rollback",
    });
    aliases[alias] = to!;
    return helperAgent();
  };
}

let server: FixtureServer;
let proxy: CuttingProxy;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  const executablePath = ensureChromium();
  const dir = await buildConsoleInto(built);
  server = await startFixtureServer({
    consoleDir: dir,
    countTo: COUNT_TO,
    everyMs: 250,
    catalog,
  });
  proxy = await startCuttingProxy(server.url);
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  await signIn(page, server.url);
}, 600_000);

// A failing step leaves a picture of the page behind, to see what the person would have seen.
afterEach(async (ctx) => {
  if (ctx.task.result?.state === "fail")
    await page.screenshot({ path: join(shots, `failed-${ctx.task.name.slice(0, 40)}.png`) });
});

afterAll(async () => {
  await browser?.close();
  await proxy?.close();
  await server?.close();
  rmSync(built, { recursive: true, force: true });
});

async function signIn(p: Page, url: string) {
  await p.goto(`${url}/console/`);
  await p.getByLabel("API key").fill(KEY);
  await p.getByRole("button", { name: "Sign in" }).click();
  await p.getByRole("heading", { name: "Sessions" }).waitFor();
}

async function startSession(p: Page, agent: string, text: string): Promise<string> {
  await p.getByRole("link", { name: "New session" }).first().click();
  // The sessions list has an "Agent" filter too: wait for the form before choosing.
  await p.getByRole("heading", { name: "New session", exact: true }).waitFor();
  await p.getByLabel("Agent").selectOption(agent);
  await p.getByLabel("First message (optional)").fill(text);
  await p.getByRole("button", { name: "Start session" }).click();
  await p.waitForURL(/#\/sessions\/ses_/);
  return /#\/sessions\/(ses_[A-Za-z0-9_-]+)/.exec(p.url())![1]!;
}

/** At the current width: nothing scrolls sideways and the header's items share one line. */
async function expectHeaderFits(where: string) {
  const fit = await page.evaluate(() => {
    const bar = document.querySelector(".topbar")!;
    const items = [...bar.querySelectorAll("a, button")].filter(
      (e) => getComputedStyle(e).display !== "none",
    );
    return {
      scrolls: document.documentElement.scrollWidth > document.documentElement.clientWidth,
      overflows: bar.scrollWidth > bar.clientWidth,
      width: document.documentElement.clientWidth,
      rights: items.map((e) => e.getBoundingClientRect().right),
      tops: items.map((e) => e.getBoundingClientRect().top),
      bottoms: items.map((e) => e.getBoundingClientRect().bottom),
    };
  });
  expect(fit.scrolls, where).toBe(false);
  expect(fit.overflows, where).toBe(false);
  expect(Math.max(...fit.rights), where).toBeLessThanOrEqual(fit.width);
  expect(Math.max(...fit.tops), `${where}: header on one line`).toBeLessThan(
    Math.min(...fit.bottoms),
  );
}

const shot = (name: string) =>
  page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
const badge = () => page.locator(".page-head .badge");

describe("console for the person who acts", () => {
  it("says 'waiting for you' for an approval: badge, title, list, filter; deciding clears it", async () => {
    const id = await startSession(page, "approver", "Move c1 to pro and c2 to basic");
    await expect.poll(() => badge().textContent()).toBe("waiting for you");
    // The title names the agent once the session's record has loaded, which can follow the badge.
    await expect.poll(() => page.title()).toMatch(/^Waiting for you · approver/);
    await expect
      .poll(() => page.getByTestId("waiting-callout").textContent())
      .toContain("2 approvals are waiting for your decision");
    await shot("11-waiting-session");

    await page.getByRole("link", { name: "Sessions", exact: true }).click();
    const row = page.locator(`[data-session="${id}"]`);
    await expect.poll(() => row.locator(".badge").textContent()).toBe("waiting for you");
    expect(await row.getByTestId("first-message").textContent()).toBe(
      "Move c1 to pro and c2 to basic",
    );
    await expect.poll(() => page.title()).toMatch(/^\(\d+\) waiting for you · Sessions/);
    await page.getByTestId("waiting-banner").getByRole("button", { name: "Show them" }).click();
    expect(await page.getByLabel("Status").inputValue()).toBe("waiting");
    await expect.poll(() => row.count()).toBe(1);
    const rows = page.locator(".session-list .session-row .badge");
    expect(new Set(await rows.allTextContents())).toEqual(new Set(["waiting for you"]));
    await shot("12-waiting-filter");

    await row.click();
    for (const title of ["Move c1 to pro", "Move c2 to basic"]) {
      const card = page.locator("article.approval", { hasText: title });
      await card.getByRole("button", { name: title.includes("c1") ? "Approve" : "Deny" }).click();
      await expect.poll(() => card.getAttribute("data-status")).toMatch(/applied|denied/);
    }
    await expect.poll(() => badge().textContent()).toBe("idle");
    await expect.poll(() => page.title()).toBe("approver · OpenComputer");
    await page.getByRole("link", { name: "Sessions", exact: true }).click();
    await page.getByLabel("Status").selectOption("waiting");
    await expect.poll(() => row.count()).toBe(0);
    await page.getByLabel("Status").selectOption("");
    await expect.poll(() => row.locator(".badge").textContent()).toBe("idle");
  });

  it("says 'waiting for you' for an open question, until it is answered", async () => {
    await startSession(page, "asker", "Change my plan");
    await expect.poll(() => badge().getAttribute("data-waiting")).toBe("answer");
    await page.getByTestId("question").getByRole("button", { name: "Pro" }).click();
    await page.getByText("Going with your choice.").waitFor();
    await expect.poll(() => badge().textContent()).toBe("idle");
    expect(await page.getByTestId("waiting-callout").count()).toBe(0);
  });

  it("shows the outcome and last activity in the list, edits labels, and ends a session", async () => {
    const id = await startSession(page, "helper", "Where is order A1?");
    await page.getByText("Order A1 has shipped.").waitFor();
    const labels = page.getByRole("region", { name: "Labels" });
    await labels.getByLabel("Name").fill("Team");
    await labels.getByRole("button", { name: "Save label" }).click();
    expect(await labels.getByRole("alert").textContent()).toContain("lowercase letter");
    await labels.getByLabel("Name").fill("team");
    await labels.getByLabel("Value").fill("billing");
    await labels.getByRole("button", { name: "Save label" }).click();
    await expect.poll(() => labels.getByTestId("labels").textContent()).toContain("team: billing");
    expect((await server.runtime.sessions.get(id)).labels).toEqual({ team: "billing" });

    await page.getByRole("link", { name: "Sessions", exact: true }).click();
    const row = page.locator(`[data-session="${id}"]`);
    await expect.poll(() => row.getByTestId("outcome").textContent()).toBe("result reported");
    expect(await row.textContent()).toContain("team: billing");
    expect(await row.locator("time").getAttribute("title")).toMatch(/^Last activity /);
    await row.click();

    await labels.getByRole("button", { name: "Remove label team" }).click();
    await expect.poll(() => labels.textContent()).toContain("No labels.");
    expect((await server.runtime.sessions.get(id)).labels).toEqual({});

    await page.getByRole("button", { name: "End session" }).click();
    await shot("13-end-confirm");
    await page.getByRole("button", { name: "Yes, end it" }).click();
    await expect.poll(() => badge().textContent()).toBe("ended");
    expect(await page.getByRole("textbox", { name: "Message" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "End session" }).count()).toBe(0);
    expect((await server.runtime.sessions.get(id)).status).toBe("ended");
  });

  it("shows requests through connections and each render with what changed", async () => {
    const id = await startSession(page, "shifter", "Where is A1?");
    await page.getByText("First answer.").waitFor();
    const composer = page.getByRole("textbox", { name: "Message" });
    await composer.fill("be careful with B2");
    await composer.press("Enter");
    await page.getByText("Second answer.").waitFor();

    const renders = page.getByRole("region", { name: "Renders" });
    await expect.poll(() => renders.locator("[data-render]").count()).toBe(2);
    const second = renders.locator('[data-render="2"]');
    await second.locator("summary").click();
    const change = second.getByTestId("render-change");
    expect(await change.textContent()).toContain("Model: script/shifter → script/shifter-careful");
    expect(await change.textContent()).toContain("Tools added: refund");
    // Each render's model says where it came from; its tools and instructions are listed.
    const facts = second.locator("dl.facts");
    expect(await facts.textContent()).toContain("script/shifter-careful (chosen by the agent)");
    expect(await facts.textContent()).toContain("refund");
    expect(await change.locator(".diff-del").textContent()).toContain(
      "- The customer said: Where is A1?",
    );
    expect(await change.locator(".diff-add").textContent()).toContain(
      "+ The customer said: be careful with B2",
    );
    expect(await renders.locator('[data-render="1"] summary').textContent()).toContain(
      "first render",
    );

    // What the egress gateway records for a request through a connection.
    const target = { connectionId: "billing", method: "POST", path: "/v1/charges" };
    await server.runtime.sessions.recordEgress(id, { type: "egress.request", data: target });
    const requests = page.getByRole("region", { name: "Outbound requests" });
    await expect.poll(() => requests.textContent()).toContain("waiting for the answer");
    await server.runtime.sessions.recordEgress(id, {
      type: "egress.response",
      data: { ...target, status: 201, durationMs: 42 },
    });
    await server.runtime.sessions.recordEgress(id, {
      type: "egress.request",
      data: { ...target, method: "GET", path: "/v1/customers/c1" },
    });
    await server.runtime.sessions.recordEgress(id, {
      type: "egress.failed",
      data: { ...target, method: "GET", path: "/v1/customers/c1", message: "connection reset" },
    });
    const items = requests.getByTestId("requests").locator("li");
    await expect.poll(() => items.count()).toBe(2);
    expect(await items.nth(0).textContent()).toMatch(/POST\s*\/v1\/charges.*billing.*201 · 42 ms/);
    expect(await items.nth(1).textContent()).toMatch(
      /GET\s*\/v1\/customers\/c1.*failed: connection reset/,
    );
    await shot("14-inspector");
  });

  it("lists agents with their aliases and deployments; rollback explains a server without it, then moves production", async () => {
    await page.getByRole("link", { name: "Agents", exact: true }).click();
    const helper = page.locator('[data-agent="helper"]');
    await expect.poll(() => helper.textContent()).toContain(`production → ${deployments[0]!.id}`);
    await helper.click();
    const list = page.getByTestId("deployments");
    await expect.poll(() => list.locator("li").count()).toBe(2);
    const current = list.locator(`[data-deployment="${deployments[0]!.id}"]`);
    const olderRow = list.locator(`[data-deployment="${deployments[1]!.id}"]`);
    await expect.poll(() => current.textContent()).toContain("production");
    await expect.poll(() => current.getByRole("button").count()).toBe(0);
    // The history, newest first.
    const moves = page.getByTestId("alias-history").locator("li");
    await expect
      .poll(() => moves.first().textContent())
      .toMatch(/production → dep_b+ \(deployed, was dep_a+\)/);

    await olderRow.getByRole("button", { name: "Roll back production to this" }).click();
    const notice = page.getByTestId("rollback-notice");
    await expect.poll(() => notice.textContent()).toContain("cannot move its aliases");
    await expect.poll(() => notice.getAttribute("role")).toBe("alert");
    await shot("15-rollback-unsupported");

    acceptRollbacks();
    await olderRow.getByRole("button", { name: "Roll back production to this" }).click();
    await expect
      .poll(() => notice.textContent())
      .toBe(`production now points at ${deployments[1]!.id}.`);
    expect(rollbacks).toEqual([{ agentId: "helper", alias: "production", to: deployments[1]!.id }]);
    await expect.poll(() => olderRow.textContent()).toContain("production");
    await expect.poll(() => olderRow.getByRole("button").count()).toBe(0);
    // Moving forward again is not a rollback.
    await expect.poll(() => current.getByRole("button").textContent()).toBe("Make this production");
    await expect
      .poll(() => moves.first().textContent())
      .toMatch(/production → dep_a+ \(rolled back, was dep_b+\)/);
    await shot("16-rolled-back");

    await page.getByRole("link", { name: "Its sessions" }).click();
    await expect.poll(() => page.getByLabel("Agent").inputValue()).toBe("helper");
  });

  it("fits a 380 px screen: one-line header, no sideways scroll, no developer jargon", async () => {
    await page.setViewportSize({ width: 380, height: 800 });
    try {
      for (const hash of ["#/", "#/agents", "#/agents/helper", "#/new"]) {
        await page.goto(`${server.url}/console/${hash}`);
        await page.locator("main h1").first().waitFor();
        await expectHeaderFits(hash);
      }
      await startSession(page, "helper", "Where is order A1?");
      await page.getByText("Order A1 has shipped.").waitFor();
      await expectHeaderFits("a session");
      const text = (await page.locator("body").textContent()) ?? "";
      for (const jargon of ["Events read", "cursor", "Retrying from event"])
        expect(text).not.toContain(jargon);
      await shot("17-narrow-session");
    } finally {
      await page.setViewportSize({ width: 1200, height: 900 });
    }
  });

  it("follows events over SSE and resumes after dropped connections with nothing lost or repeated", async () => {
    const p = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const reads: Array<{ after: number; accept: string }> = [];
    p.on("request", (r) => {
      const m = /\/sessions\/ses_[^/]+\/events\?after=(\d+)/.exec(r.url());
      if (m) reads.push({ after: Number(m[1]), accept: r.headers().accept ?? "" });
    });
    try {
      await signIn(p, proxy.url);
      await startSession(p, "counter", "count for me");
      const progress = p.getByTestId("progress").locator("li");
      let cuts = 0;
      let firstCut = -1;
      for (const atLeast of [4, 14]) {
        await expect
          .poll(() => progress.count(), { timeout: 15_000 })
          .toBeGreaterThanOrEqual(atLeast);
        if (firstCut === -1) firstCut = reads.length;
        cuts += proxy.cutStreams();
      }
      expect(cuts).toBeGreaterThanOrEqual(2);
      await p.getByText("Counted.").waitFor({ timeout: 20_000 });
      const ns = (await progress.allTextContents()).map((t) => JSON.parse(t).n);
      expect(ns).toEqual(Array.from({ length: COUNT_TO }, (_, i) => i + 1));
      const keys = await p
        .locator(".timeline > li[data-key]")
        .evaluateAll((els) => els.map((e) => e.getAttribute("data-key")));
      expect(new Set(keys).size).toBe(keys.length);
      // Every read was a stream (no JSON polling), and each reconnect after a cut asked from
      // further on: the last event it had, never from the start.
      expect(reads.every((r) => r.accept.includes("text/event-stream"))).toBe(true);
      const afters = reads.slice(firstCut).map((r) => r.after);
      expect(afters.length).toBeGreaterThanOrEqual(2);
      expect(afters[0]!).toBeGreaterThan(0);
      for (let i = 1; i < afters.length; i++) expect(afters[i]!).toBeGreaterThan(afters[i - 1]!);
    } finally {
      await p.close();
    }
  });
});
