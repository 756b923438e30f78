// Bad inputs to the subscription routes get a typed error naming the field at fault, and
// nothing is stored.
import { createSqliteDeliveryStore, createSqliteStore } from "@opencomputer/store-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { checkReplay, EventSubscriptions, retryAfterMs } from "../src/index.ts";

const store = createSqliteStore({ path: ":memory:" });
afterAll(() => store.close());

const base = {
  projectId: "default",
  environment: "production",
  events: ["turn.completed"],
  destination: { type: "https", url: "https://app.example.com/oc/events" },
};

describe("subscription input", () => {
  const strict = new EventSubscriptions({ store: createSqliteDeliveryStore(store) });
  const dev = new EventSubscriptions({
    store: createSqliteDeliveryStore(store),
    allowLoopbackHttp: true,
  });

  it.each([
    ["http://app.example.com/x", "invalid_event_subscription"],
    ["http://127.0.0.1:8080/x", "invalid_event_subscription"],
    ["https://user:pw@app.example.com/x", "invalid_event_subscription"],
    ["https://app.example.com/x#frag", "invalid_event_subscription"],
    ["ftp://app.example.com/x", "invalid_event_subscription"],
    ["/relative", "invalid_event_subscription"],
    [`https://app.example.com/${"a".repeat(2100)}`, "invalid_event_subscription"],
  ])("refuses destination %s", async (url, code) => {
    await expect(
      strict.create({ ...base, destination: { type: "https", url } }),
    ).rejects.toMatchObject({ code, path: "destination.url" });
  });

  it("accepts loopback http only when configured for development", async () => {
    await expect(
      dev.create({ ...base, destination: { type: "https", url: "http://app.example.com/x" } }),
    ).rejects.toMatchObject({ code: "invalid_event_subscription", path: "destination.url" });
    const created = await dev.create({
      ...base,
      destination: { type: "https", url: "http://localhost:9999/hook" },
    });
    expect(created.subscription.destination.url).toBe("http://localhost:9999/hook");
    expect(created.signingSecret).toMatch(/^ocsec_[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(created.subscription)).not.toContain(created.signingSecret);
  });

  it("names the field at fault", async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ events: ["turn.completed", "turn.started"] }, "invalid_event_subscription", "events[1]"],
      [{ events: [] }, "invalid_event_subscription", "events"],
      [{ environment: "staging" }, "invalid_event_subscription", "environment"],
      [{ agentId: "a".repeat(200) }, "invalid_event_subscription", "agentId"],
      [
        { destination: { type: "sqs", url: "https://x.example" } },
        "invalid_event_subscription",
        "destination.type",
      ],
      [{ destination: "https://x.example" }, "invalid_event_subscription", "destination"],
      [
        { destination: { type: "https", url: "https://x.example", extra: 1 } },
        "invalid_event_subscription",
        "destination.extra",
      ],
    ];
    for (const [over, code, path] of cases)
      await expect(strict.create({ ...base, ...over })).rejects.toMatchObject({ code, path });
    expect(await strict.list({ projectId: "default" })).toHaveLength(1);
  });

  it("checks replay selections", () => {
    expect(() => checkReplay({})).toThrow(expect.objectContaining({ path: "deliveryIds" }));
    expect(() => checkReplay({ deliveryIds: ["a"], sessionId: "s" })).toThrow(
      expect.objectContaining({ code: "invalid_input" }),
    );
    expect(() => checkReplay({ deliveryIds: Array(101).fill("d") })).toThrow(
      expect.objectContaining({ path: "deliveryIds" }),
    );
    expect(() => checkReplay({ since: "yesterday" })).toThrow(
      expect.objectContaining({ path: "since" }),
    );
    expect(() => checkReplay({ sessionId: "s", fromSequence: -1 })).toThrow(
      expect.objectContaining({ path: "fromSequence" }),
    );
    expect(() => checkReplay({ since: "2026-01-01T00:00:00Z", limit: 101 })).toThrow(
      expect.objectContaining({ path: "limit" }),
    );
    expect(checkReplay({ since: "2026-01-01T00:00:00Z", limit: 5 })).toEqual({
      since: "2026-01-01T00:00:00.000Z",
      limit: 5,
    });
  });

  it("reads Retry-After as seconds or a date, within 1 second and 1 hour", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs("7", now)).toBe(7_000);
    expect(retryAfterMs("0", now)).toBe(1_000);
    expect(retryAfterMs("99999", now)).toBe(3_600_000);
    expect(retryAfterMs("Thu, 01 Jan 2026 00:02:00 GMT", now)).toBe(120_000);
    expect(retryAfterMs("soon", now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });
});
