import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { type FixtureServer, KEY, startFixtureServer } from "@opencomputer/testkit/stack";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConsoleInto } from "./build.ts";
import { ensureChromium } from "./chromium.ts";

const repo = resolve(import.meta.dirname, "../../..");
const shots = join(repo, "test-output", "console");
const COUNT_TO = 20;

let server: FixtureServer;
let browser: Browser;
let page: Page;
const built = join(repo, "test-output", `console-dist-${process.pid}`);

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  const executablePath = ensureChromium();
  const dir = await buildConsoleInto(built);
  server = await startFixtureServer({ consoleDir: dir, countTo: COUNT_TO, everyMs: 150 });
  browser = await chromium.launch({
    executablePath,
    headless: true,
    // Root in a container has no user namespaces for Chromium's own sandbox.
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  rmSync(built, { recursive: true, force: true });
});

async function shot(name: string) {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

/** Starts a session from the console's form and lands on its page. */
async function startSession(agent: string, text: string): Promise<string> {
  await page.getByRole("link", { name: "New session" }).first().click();
  // The sessions list has an "Agent" filter too: wait for the form before choosing.
  await page.getByRole("heading", { name: "New session", exact: true }).waitFor();
  await page.getByLabel("Agent").selectOption(agent);
  await page.getByLabel("First message (optional)").fill(text);
  await page.getByRole("button", { name: "Start session" }).click();
  await page.waitForURL(/#\/sessions\/ses_/);
  return /#\/sessions\/(ses_[A-Za-z0-9_-]+)/.exec(page.url())![1]!;
}

describe("console in headless Chromium", () => {
  it("serves the console without a key, refuses a wrong key, and signs in with the right one", async () => {
    const bare = await fetch(`${server.url}/`, { redirect: "manual" });
    expect(bare.status).toBe(302);
    expect(bare.headers.get("location")).toBe("/console/");
    const api = await fetch(`${server.url}/sessions`);
    expect(api.status).toBe(401);

    await page.goto(`${server.url}/console/`);
    await page.getByLabel("API key").fill("wrong-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("not accepted");
    await page.getByLabel("API key").fill(KEY);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    await shot("01-signed-in");
  });

  it("creates a session, shows the tool run with its input, progress and output, and the result", async () => {
    const id = await startSession("helper", "Where is order A1?");
    const tools = page.locator("details.tool");
    await page.getByText("Order A1 has shipped.").waitFor();
    await expect.poll(() => tools.count()).toBe(2);
    const lookup = tools.filter({ hasText: "lookup_order" });
    await lookup.locator("summary").click(); // completed calls start folded; open it
    expect(await lookup.textContent()).toContain('"orderId": "A1"');
    expect(await lookup.textContent()).toContain('"step": "searching"');
    expect(await lookup.getByTestId("tool-output").textContent()).toContain('"status": "shipped"');
    const result = tools.filter({ hasText: "report" });
    expect(await result.textContent()).toMatch(/Committed result \(turn turn_/);
    await expect
      .poll(() => page.getByTestId("session-result").textContent())
      .toContain('"status": "shipped"');
    await shot("02-tool-and-result");

    // Tokens and cost of the session and of its turn, from its usage.recorded events.
    const usage = page.getByRole("region", { name: "Usage" });
    await expect.poll(() => usage.getByTestId("usage-total").textContent()).toContain("$0.0159");
    expect(await usage.getByTestId("usage-total").textContent()).toContain("4,400 in · 180 out");
    const turn = usage.getByTestId("usage-turns").locator("tbody tr");
    expect(await turn.count()).toBe(1);
    expect((await turn.locator("th, td").allTextContents()).map((t) => t.trim())).toEqual([
      "Turn 1",
      "3",
      "4,400",
      "180",
      "$0.0159",
    ]);
    expect(await usage.getByTestId("usage-unpriced").count()).toBe(0);

    // The list shows it, live, and filters by agent and status.
    await page.getByRole("link", { name: "Sessions", exact: true }).click();
    const row = page.locator(`[data-session="${id}"]`);
    await expect.poll(() => row.textContent()).toContain("idle");
    await page.getByLabel("Agent").fill("asker");
    await expect.poll(() => row.count()).toBe(0);
    await page.getByLabel("Agent").fill("helper");
    await page.getByLabel("Status").selectOption("idle");
    await expect.poll(() => row.count()).toBe(1);
    await shot("03-sessions-list");
  });

  it("answers a question by clicking an option", async () => {
    await startSession("asker", "Change my plan");
    const question = page.getByTestId("question");
    await question.waitFor();
    expect(await question.textContent()).toContain("Which plan should I use?");
    await shot("04-question");
    await question.getByRole("button", { name: "Pro" }).click();
    await page.getByText("Going with your choice.").waitFor();
    await expect.poll(() => question.count()).toBe(0);
    expect(await page.locator('[data-kind="user"]').last().textContent()).toContain("You answered");
    // Keyboard: Enter in the composer sends. The script has no third step, so the turn fails
    // and the console shows the public failure code.
    const composer = page.getByRole("textbox", { name: "Message" });
    await composer.fill("thanks");
    await composer.press("Enter");
    await page.locator('[data-kind="user"]', { hasText: "thanks" }).waitFor();
    const failure = page.locator(".turn-end.failed");
    await failure.waitFor();
    expect(await failure.textContent()).toContain("model_rejected");
    await shot("05-turn-failed");
  });

  it("links a delegation to its child session, where its question is answered", async () => {
    const parent = await startSession("delegator", "Which plan?");
    const link = page.getByTestId("subagent-link");
    await link.waitFor();
    await page.getByTestId("subagent-waiting").waitFor();
    expect(await link.textContent()).toContain("Delegated to asker");
    expect(await page.getByTestId("subagent-waiting").textContent()).toContain(
      "Which plan should I use?",
    );
    await shot("04b-delegation-waiting");
    await link.getByRole("link").click();
    await page.waitForURL(/#\/sessions\/ses_sub_/);
    expect(await page.getByTestId("parent-link").textContent()).toContain("delegator");
    const question = page.getByTestId("question");
    await question.waitFor();
    await question.getByRole("button", { name: "Pro" }).click();
    await page.getByText("Going with your choice.").waitFor();
    await page.getByTestId("parent-link").getByRole("link").click();
    await page.waitForURL(new RegExp(`#/sessions/${parent}$`));
    await page.getByText("The asker settled the plan.").waitFor();
    await expect.poll(() => page.getByTestId("subagent-waiting").count()).toBe(0);
    expect(await page.getByTestId("tool-output").first().textContent()).toContain(
      "Going with your choice.",
    );
    await shot("04c-delegation-answered");
  });

  it("approves one card and sees it applied, denies another", async () => {
    await startSession("approver", "Move c1 to pro and c2 to basic");
    const first = page.locator("article.approval", { hasText: "Move c1 to pro" });
    const second = page.locator("article.approval", { hasText: "Move c2 to basic" });
    await first.waitFor();
    await second.waitFor();
    expect(await first.textContent()).toContain("Customer");
    await shot("06-approval-cards");
    await first.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => first.getAttribute("data-status")).toBe("applied");
    expect(await first.textContent()).toContain('"moved": "c1"');
    await second.getByRole("button", { name: "Deny" }).click();
    await expect.poll(() => second.getAttribute("data-status")).toBe("denied");
    expect(await second.getByRole("button").count()).toBe(0);
    await page.setViewportSize({ width: 380, height: 800 });
    await expect
      .poll(() =>
        page.evaluate(
          "document.documentElement.scrollWidth <= document.documentElement.clientWidth",
        ),
      )
      .toBe(true);
    await shot("07-approvals-narrow");
    await page.setViewportSize({ width: 1200, height: 900 });
  });

  it("shows an unconfirmed apply with Retry (then applied) and Dismiss", async () => {
    await startSession("refunder", "Refund r1 and r2");
    const first = page.locator("article.approval", { hasText: "Refund r1" });
    const second = page.locator("article.approval", { hasText: "Refund r2" });
    await first.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => first.getAttribute("data-status")).toBe("unconfirmed");
    expect(await first.textContent()).toContain("may have happened");
    await shot("08-unconfirmed");
    await first.getByRole("button", { name: "Retry apply" }).click();
    await expect.poll(() => first.getAttribute("data-status")).toBe("applied");
    expect(await first.textContent()).toContain('"refunded": "r1"');
    await second.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => second.getAttribute("data-status")).toBe("unconfirmed");
    await second.getByRole("button", { name: "Dismiss" }).click();
    await expect.poll(() => second.getAttribute("data-status")).toBe("dismissed");
    expect(await second.getByRole("button").count()).toBe(0);
  });

  it("shows the computer's generation, expiry and release reason", async () => {
    const id = await startSession("helper", "");
    const panel = page.getByRole("region", { name: "Computer" });
    await expect.poll(() => panel.textContent()).toContain("No computer yet");
    const startedAt = Date.now();
    const change = { generation: 1, startedAt, expiresAt: startedAt + 1_800_000 };
    await server.runtime.sessions.recordComputer(id, { ...change, state: "running" });
    await expect
      .poll(() => page.getByTestId("computer").textContent())
      .toMatch(/Staterunning.*Generation1.*Expiresin (29|30) min/);
    await server.runtime.sessions.recordComputer(id, {
      ...change,
      state: "released",
      reason: "idle",
    });
    await expect
      .poll(() => page.getByTestId("computer").textContent())
      .toMatch(/Statereleased.*\(idle\)/);
    await shot("09-computer");
  });

  it("reloaded mid-stream, shows every progress event once and in order", async () => {
    await startSession("counter", "count for me");
    const progress = page.getByTestId("progress").locator("li");
    await expect.poll(() => progress.count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    const before = await progress.count();
    expect(before).toBeLessThan(COUNT_TO); // still streaming when the page goes away
    await page.reload();
    await page.getByText("Counted.").waitFor({ timeout: 15_000 });
    const texts = (await progress.allTextContents()).map((t) => JSON.parse(t).n);
    expect(texts).toEqual(Array.from({ length: COUNT_TO }, (_, i) => i + 1));
    const items = await page.locator(".timeline > li[data-key]").all();
    const keys = await Promise.all(items.map((item) => item.getAttribute("data-key")));
    expect(new Set(keys).size).toBe(keys.length);
    const kinds = await Promise.all(items.map((item) => item.getAttribute("data-kind")));
    expect(kinds).toEqual(["user", "tool", "assistant"]);
    await shot("10-after-reload");
  });
});
