import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { envLocalSecrets, FileSecretStore, layeredSecrets, parseEnvValue } from "../src/index.ts";
import { refusal, secretFiles } from "./secret-files.ts";

const files = secretFiles("oc-secrets-");

describe("FileSecretStore", () => {
  it("keeps values encrypted and separate per environment; lists names and dates only", async () => {
    const store = new FileSecretStore(files.paths);
    expect(await store.set("development", "API_KEY", "dev-value-123")).toEqual({
      created: true,
      origins: [],
    });
    expect(await store.set("development", "API_KEY", "dev-value-456")).toEqual({
      created: false,
      origins: [],
    });
    await store.set("production", "API_KEY", "prod-value-789");
    expect(await store.resolve("development", "API_KEY")).toEqual({
      value: "dev-value-456",
      origins: [],
    });
    expect(await store.resolve("production", "API_KEY")).toMatchObject({ value: "prod-value-789" });
    expect(await store.resolve("production", "OTHER")).toBeUndefined();
    const listed = await store.list("development");
    expect(listed).toEqual([
      {
        name: "API_KEY",
        environment: "development",
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        origins: [],
      },
    ]);
    const onDisk = readFileSync(files.paths.file, "utf8");
    for (const value of ["dev-value", "prod-value"]) expect(onDisk).not.toContain(value);
    expect(await store.remove("development", "API_KEY")).toBe(true);
    expect(await store.remove("development", "API_KEY")).toBe(false);
    expect(await new FileSecretStore(files.paths).resolve("production", "API_KEY")).toMatchObject({
      value: "prod-value-789",
    });
  });

  it("binds each value to its slot: a ciphertext moved to another name does not open", async () => {
    const store = new FileSecretStore(files.paths);
    await store.set("production", "A_KEY", "value-a");
    const file = JSON.parse(readFileSync(files.paths.file, "utf8"));
    file.environments.production.B_KEY = file.environments.production.A_KEY;
    file.environments.development = { A_KEY: file.environments.production.A_KEY };
    writeFileSync(files.paths.file, JSON.stringify(file));
    expect((await refusal(store.resolve("production", "B_KEY"))).code).toBe("secret_unreadable");
    expect((await refusal(store.resolve("development", "A_KEY"))).code).toBe("secret_unreadable");
  });

  it("refuses a key file others can read", async () => {
    await new FileSecretStore(files.paths).set("development", "K", "v");
    chmodSync(files.paths.keyFile, 0o644);
    const error = await refusal(new FileSecretStore(files.paths).resolve("development", "K"));
    expect(error.code).toBe("secret_key_exposed");
    expect(error.message).toContain("chmod 600");
  });

  it("refuses bad names, environments and values, naming the field", async () => {
    const store = new FileSecretStore(files.paths);
    for (const [call, code, path] of [
      [store.set("development", "lower", "v"), "secret_name_invalid", "name"],
      [store.set("staging", "K", "v"), "secret_environment_invalid", "environment"],
      [store.set("development", "K", ""), "secret_value_invalid", "value"],
      [store.set("development", "K", "a\nb"), "secret_value_invalid", "value"],
      [store.list("test"), "secret_environment_invalid", "environment"],
    ] as const) {
      const error = await refusal(call);
      expect(error.code).toBe(code);
      expect(error.details.path).toBe(path);
    }
  });
});

describe(".env.local", () => {
  it("parses only the name asked for", () => {
    const text = "# c\nexport A=1\nB = \"two words\" \nC=three # note\nD='q#x'\nA=last\n";
    expect(parseEnvValue(text, "A")).toBe("last");
    expect(parseEnvValue(text, "B")).toBe("two words");
    expect(parseEnvValue(text, "C")).toBe("three");
    expect(parseEnvValue(text, "D")).toBe("q#x");
    expect(parseEnvValue(text, "E")).toBeUndefined();
  });

  it("serves development only, after the store", async () => {
    const store = new FileSecretStore(files.paths);
    const env = envLocalSecrets(files.dir);
    expect(await env.resolve("development", "K")).toBeUndefined();
    mkdirSync(join(files.dir, "opencomputer"), { recursive: true });
    writeFileSync(join(files.dir, "opencomputer", ".env.local"), "K=from-env\n");
    const layered = layeredSecrets(store, env);
    expect(await layered.resolve("development", "K")).toBe("from-env");
    expect(await layered.resolve("production", "K")).toBeUndefined();
    await store.set("development", "K", "from-store");
    expect(await layered.resolve("development", "K")).toMatchObject({ value: "from-store" });
  });
});
