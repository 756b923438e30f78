// `opencomputer doctor` warns about each connection header that sends a secret with no origin
// binding (any agent of the project could send it elsewhere), and about a binding that leaves
// out the connection's origin (the gateway refuses it); without a secret store to look at it
// prints one general note. No value is read or printed.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { FileSecretStore } from "@opencomputer/connections";
import { afterAll, describe, expect, it } from "vitest";
import { type CommandIO, runBuildCommand } from "../src/index.ts";
import { copyFixture } from "./helpers.ts";

const VALUE = "sk_doctor_8e2a_not_printed";
const project = copyFixture("secret-bindings");
afterAll(() => project.remove());

async function doctor(): Promise<{ code: number; out: string; err: string }> {
  const io: CommandIO & { out: string; err: string } = {
    out: "",
    err: "",
    stdout: (text) => {
      io.out += text;
    },
    stderr: (text) => {
      io.err += text;
    },
  };
  const code = await runBuildCommand({ doctor: true, dir: project.dir }, io);
  return { code, out: io.out, err: io.err };
}

describe("doctor and secret origin bindings", { timeout: 120_000 }, () => {
  it("prints a general note when it cannot see a secret store", async () => {
    const { code, err } = await doctor();
    expect(code).toBe(0);
    expect(err).toContain("note: no secret store in .opencomputer/ to check");
    expect(err).toContain("--origin");
    expect(err).not.toContain("warning secret_origin");
  });

  it("warns per unbound or mismatched header, where the connection is declared", async () => {
    mkdirSync(join(project.dir, ".opencomputer"), { recursive: true });
    const store = new FileSecretStore({
      file: join(project.dir, ".opencomputer", "secrets.json"),
      keyFile: join(project.dir, ".opencomputer", "secret.key"),
    });
    await store.set("production", "BILLING_KEY", VALUE);
    await store.set("production", "ACCOUNT_KEY", VALUE, {
      origins: ["https://accounts.example.com"],
    });
    await store.set("development", "BILLING_KEY", VALUE, {
      origins: ["https://billing.example.com"],
    });
    const { code, err } = await doctor();
    expect(code).toBe(0);
    const lines = err.split("\n").filter((l) => l.includes("warning secret_origin"));
    expect(lines).toHaveLength(2);
    const where = "opencomputer/agents/payer/connections/billing.ts:4:3: warning";
    expect(lines[0]).toContain(
      `${where} secret_origin_unbound connection "billing" sends the secret BILLING_KEY (production) in its authorization header`,
    );
    expect(lines[0]).toContain(
      "opencomputer secrets set BILLING_KEY --environment production --origin https://billing.example.com",
    );
    expect(lines[1]).toContain(
      `${where} secret_origin_mismatch connection "billing" sends the secret ACCOUNT_KEY (production) in its x-account header`,
    );
    expect(err).toContain("2 secret binding warnings");
    expect(err).not.toContain(VALUE);
    expect(err).not.toContain("note: no secret store");
  });

  it("is quiet once every secret is bound to the connection's origin", async () => {
    const store = new FileSecretStore({
      file: join(project.dir, ".opencomputer", "secrets.json"),
      keyFile: join(project.dir, ".opencomputer", "secret.key"),
    });
    for (const name of ["BILLING_KEY", "ACCOUNT_KEY"]) {
      await store.set("production", name, VALUE, { origins: ["https://billing.example.com"] });
    }
    const { err } = await doctor();
    expect(err).not.toContain("secret_origin");
    expect(err).not.toContain("note:");
  });
});
