import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConsoleFiles } from "@opencomputer/server";
import { KEY, startFixtureServer } from "@opencomputer/testkit/stack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let dir: string;
let files: ReturnType<typeof createConsoleFiles>;
const get = (path: string, method = "GET") => files(new Request(`http://x${path}`, { method }));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "oc-static-"));
  mkdirSync(join(dir, "dist", "assets"), { recursive: true });
  writeFileSync(join(dir, "dist", "index.html"), "<!doctype html><p>console");
  writeFileSync(join(dir, "dist", "assets", "app-abc.js"), "console.log(1)");
  writeFileSync(join(dir, "secret.txt"), "outside");
  writeFileSync(join(dir, "dist", ".env"), "hidden");
  files = createConsoleFiles({ dir: join(dir, "dist") });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("console static files", () => {
  it("serves index and hashed assets with types, caching and security headers", async () => {
    const index = (await get("/console/"))!;
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toMatch(/^text\/html/);
    expect(index.headers.get("cache-control")).toBe("no-cache");
    expect(index.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(await index.text()).toContain("console");
    const asset = (await get("/console/assets/app-abc.js"))!;
    expect(asset.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    const head = (await get("/console/assets/app-abc.js", "HEAD"))!;
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("redirects / and /console, falls back to index for app paths, 404s missing files", async () => {
    expect((await get("/"))!.headers.get("location")).toBe("/console/");
    expect((await get("/console"))!.status).toBe(302);
    expect(await (await get("/console/sessions/ses_1"))!.text()).toContain("console");
    expect((await get("/console/assets/missing.js"))!.status).toBe(404);
  });

  it("never leaves its directory nor shows hidden files, and leaves the API alone", async () => {
    for (const path of [
      "/console/../secret.txt",
      "/console/%2e%2e/secret.txt",
      "/console/.env",
      "/console/assets/%2e%2e%2f..%2fsecret.txt",
      "/console/a%5c..%5c..%5csecret.txt",
    ]) {
      const r = (await get(path))!;
      expect(r === null || r.status === 404 || r.status === 302, path).toBe(true);
      if (r) expect(await r.text()).not.toContain("outside");
    }
    expect(await get("/sessions")).toBeNull();
    expect(await get("/console/", "POST")).toBeNull();
  });

  it("answers 503 with the build command when the console was not built", async () => {
    const missing = createConsoleFiles({ dir: join(dir, "nothing") });
    const r = (await missing(new Request("http://x/console/")))!;
    expect(r.status).toBe(503);
    expect(await r.text()).toContain("npm run build -w @opencomputer/console");
  });

  it("is mounted in the handler: files need no key, the API still does", async () => {
    const server = await startFixtureServer({ consoleDir: join(dir, "dist") });
    try {
      expect((await fetch(`${server.url}/console/`)).status).toBe(200);
      expect((await fetch(`${server.url}/console/assets/..%2f..%2fsecret.txt`)).status).toBe(404);
      expect((await fetch(`${server.url}/sessions`)).status).toBe(401);
      expect((await fetch(`${server.url}/console/`, { method: "POST" })).status).toBe(401);
      const ok = await fetch(`${server.url}/sessions`, { headers: { "x-api-key": KEY } });
      expect(ok.status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
