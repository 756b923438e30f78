import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseEventDelivery, signEventDelivery, verifyEventDelivery } from "../src/index.ts";

const body = JSON.stringify({
  schema: "opencomputer.event-delivery/v1",
  deliveryId: "dlv_1",
  eventId: "evt_1",
  sequence: 42,
  occurredAt: "2026-09-25T00:00:00.000Z",
  projectId: "default",
  environment: "development",
  agentId: "hygiene",
  deploymentId: "dep_1",
  sessionId: "ses_1",
  turnId: "turn_1",
  type: "turn.completed",
  data: { status: "completed", result: { text: "Done: 3 flags removed.", truncated: false } },
});
const path = "/oc/events?tenant=acme";
const now = 1_790_000_000;

describe("event delivery signatures", () => {
  it("is HMAC-SHA-256 over timestamp.METHOD.path.body, as any language computes it", async () => {
    const signature = await signEventDelivery(["whsec_a"], {
      timestamp: now,
      method: "post",
      path,
      body,
    });
    const expected = createHmac("sha256", "whsec_a")
      .update(`${now}.POST.${path}.${body}`)
      .digest("hex");
    expect(signature).toBe(`v1=${expected}`);
  });

  it("verifies a fresh delivery under either secret during a rotation", async () => {
    const signature = await signEventDelivery(["new", "old"], {
      timestamp: now,
      method: "POST",
      path,
      body,
    });
    expect(signature.split(",")).toHaveLength(2);
    const headers = new Headers({ "x-oc-timestamp": String(now), "x-oc-signature": signature });
    for (const secret of ["new", "old", ["other", "old"]]) {
      expect(await verifyEventDelivery({ secret, headers, method: "POST", path, body, now })).toBe(
        true,
      );
    }
  });

  it("refuses a changed body, path, method, secret, a stale or missing timestamp", async () => {
    const signature = await signEventDelivery(["s"], {
      timestamp: now,
      method: "POST",
      path,
      body,
    });
    const headers = { "x-oc-timestamp": String(now), "x-oc-signature": signature };
    const ok = { secret: "s", headers, method: "POST", path, body, now };
    expect(await verifyEventDelivery(ok)).toBe(true);
    expect(await verifyEventDelivery({ ...ok, body: `${body} ` })).toBe(false);
    expect(await verifyEventDelivery({ ...ok, path: "/oc/events" })).toBe(false);
    expect(await verifyEventDelivery({ ...ok, method: "PUT" })).toBe(false);
    expect(await verifyEventDelivery({ ...ok, secret: "t" })).toBe(false);
    expect(await verifyEventDelivery({ ...ok, secret: "" })).toBe(false);
    expect(await verifyEventDelivery({ ...ok, now: now + 301 })).toBe(false);
    expect(await verifyEventDelivery({ ...ok, now: now - 301 })).toBe(false);
    expect(await verifyEventDelivery({ ...ok, headers: { "x-oc-signature": signature } })).toBe(
      false,
    );
    // Frameworks hand over plain records with the sender's spelling of the names.
    const capitalised = { "X-OC-Timestamp": String(now), "X-OC-Signature": signature };
    expect(await verifyEventDelivery({ ...ok, headers: capitalised })).toBe(true);
  });
});

describe("parseEventDelivery", () => {
  it("returns the v1 body and refuses anything else", () => {
    expect(parseEventDelivery(body)).toMatchObject({ eventId: "evt_1", type: "turn.completed" });
    expect(parseEventDelivery("{")).toBeNull();
    expect(parseEventDelivery(JSON.stringify({ ...JSON.parse(body), schema: "v0" }))).toBeNull();
    expect(
      parseEventDelivery(JSON.stringify({ ...JSON.parse(body), type: "turn.started" })),
    ).toBeNull();
  });
});
