// `opencomputer secrets set NAME --origin …` binds a secret to the origins the gateway may send
// it to (repeatable, per environment), `list` shows the binding, a new value keeps it, and
// `--any-origin` removes it. Run in process: the command is a function of argv and stdio.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { secretsCommand } from "../src/commands/secrets.ts";

const dir = mkdtempSync(join(tmpdir(), "oc-secrets-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const VALUE = "sk_cli_origin_5a1f_hidden";

async function run(argv: string[], input = "") {
  let stdout = "";
  let stderr = "";
  const code = await secretsCommand([...argv, "--dir", dir], {
    stdin: Readable.from([Buffer.from(input)]),
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

async function failure(argv: string[], input = "") {
  return run(argv, input).then(
    () => {
      throw new Error("expected a refusal");
    },
    (error: { code: string; message: string; details: { path?: string } }) => error,
  );
}

describe("secrets set --origin", () => {
  it("binds a secret to its origins, per environment, and lists the binding", async () => {
    const set = await run(
      [
        "set",
        "BILLING_KEY",
        "--environment",
        "production",
        "--origin",
        "https://billing.example.com",
        "--origin",
        "https://EU.billing.example.com:443/",
      ],
      `${VALUE}\n`,
    );
    expect(set.stdout).toBe(
      "set BILLING_KEY (production), only to https://billing.example.com https://eu.billing.example.com\n",
    );
    await run(["set", "BILLING_KEY"], "dev-value");
    const production = JSON.parse(
      (await run(["list", "--environment", "production", "--json"])).stdout,
    );
    expect(production).toEqual([
      expect.objectContaining({
        name: "BILLING_KEY",
        origins: ["https://billing.example.com", "https://eu.billing.example.com"],
      }),
    ]);
    const development = await run(["list"]);
    expect(development.stdout).toMatch(/^BILLING_KEY\tdevelopment\t.*\tany origin\n$/);
    const text = await run(["list", "--environment", "production"]);
    expect(text.stdout).toContain(
      "\tonly to https://billing.example.com https://eu.billing.example.com",
    );
    for (const out of [set, development, text])
      expect(out.stdout + out.stderr).not.toContain(VALUE);
  });

  it("keeps the binding when the value is rotated; --any-origin removes it", async () => {
    const rotated = await run(["set", "BILLING_KEY", "-e", "production"], "rotated-value");
    expect(rotated.stdout).toBe(
      "updated BILLING_KEY (production), only to https://billing.example.com https://eu.billing.example.com\n",
    );
    const unbound = await run(["set", "BILLING_KEY", "-e", "production", "--any-origin"], "v");
    expect(unbound.stdout).toBe("updated BILLING_KEY (production), any origin\n");
  });

  it("refuses a bad origin before reading the value, naming the field", async () => {
    const error = await failure(["set", "K", "--origin", "https://x.example.com/v1"], "v");
    expect(error.code).toBe("secret_origin_invalid");
    expect(error.details.path).toBe("origins[0]");
    const both = await failure(["set", "K", "--origin", "https://x.example.com", "--any-origin"]);
    expect(both.code).toBe("usage");
    expect(
      JSON.parse((await run(["list", "--json"])).stdout).map((s: { name: string }) => s.name),
    ).toEqual(["BILLING_KEY"]);
  });
});
