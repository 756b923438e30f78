// Origin bindings in the secret store: kept with the value, per environment, listed, kept when a
// value is rotated, sealed into the ciphertext (an edited binding fails to open), and secret
// files written before bindings existed still read.

import { createCipheriv, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FileSecretStore } from "../src/index.ts";
import { refusal, secretFiles } from "./secret-files.ts";

const files = secretFiles("oc-binding-");

describe("origin bindings", () => {
  it("are normalised, listed, per environment, and kept when the value is rotated", async () => {
    const store = new FileSecretStore(files.paths);
    const set = await store.set("production", "API_KEY", "v1-value", {
      origins: ["https://API.example.com:443", "https://b.example.com/", "https://api.example.com"],
    });
    expect(set.origins).toEqual(["https://api.example.com", "https://b.example.com"]);
    await store.set("development", "API_KEY", "dev-value");
    expect((await store.list("production"))[0]!.origins).toEqual(set.origins);
    expect((await store.list("development"))[0]!.origins).toEqual([]);
    // Rotating the value without --origin keeps the binding.
    await store.set("production", "API_KEY", "v2-value");
    expect(await store.resolve("production", "API_KEY")).toEqual({
      value: "v2-value",
      origins: set.origins,
    });
    // [] unbinds explicitly.
    await store.set("production", "API_KEY", "v3-value", { origins: [] });
    expect(await store.resolve("production", "API_KEY")).toEqual({
      value: "v3-value",
      origins: [],
    });
  });

  it("refuses origins that are not scheme, host and port, naming the field", async () => {
    const store = new FileSecretStore(files.paths);
    for (const bad of [
      "api.example.com",
      "ftp://api.example.com",
      "http://api.example.com",
      "https://api.example.com/v1",
      "https://user@api.example.com",
      "https://api.example.com/?q=1",
    ]) {
      const error = await refusal(store.set("production", "K", "v", { origins: [bad] }));
      expect(error.code).toBe("secret_origin_invalid");
      expect(error.details.path).toBe("origins[0]");
    }
    // Plain http is a loopback development origin only.
    await store.set("development", "K", "v", { origins: ["http://127.0.0.1:8080"] });
  });

  it("are sealed with the value: editing or dropping a binding in the file does not widen it", async () => {
    const store = new FileSecretStore(files.paths);
    await store.set("production", "A_KEY", "value-a", { origins: ["https://a.example.com"] });
    await store.set("production", "B_KEY", "value-b", { origins: ["https://b.example.com"] });
    const file = JSON.parse(readFileSync(files.paths.file, "utf8"));
    expect(file.version).toBe(2);
    file.environments.production.A_KEY.origins = ["https://evil.example"];
    delete file.environments.production.B_KEY.origins;
    writeFileSync(files.paths.file, JSON.stringify(file));
    expect((await refusal(store.resolve("production", "A_KEY"))).code).toBe("secret_unreadable");
    expect((await refusal(store.resolve("production", "B_KEY"))).code).toBe("secret_unreadable");
  });

  it("reads a version-1 file (no bindings) and keeps its records readable after a write", async () => {
    // A file as the store wrote it before bindings existed.
    const key = randomBytes(32);
    mkdirSync(join(files.dir, ".opencomputer"), { recursive: true });
    writeFileSync(files.paths.keyFile, `${key.toString("base64")}\n`, { mode: 0o600 });
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(Buffer.from("opencomputer.secret.v1\0production\0OLD_KEY", "utf8"));
    const data = Buffer.concat([cipher.update("old-value", "utf8"), cipher.final()]);
    const at = "2024-01-01T00:00:00.000Z";
    const sealed = {
      iv: iv.toString("base64"),
      tag: cipher.getAuthTag().toString("base64"),
      data: data.toString("base64"),
      createdAt: at,
      updatedAt: at,
    };
    writeFileSync(
      files.paths.file,
      JSON.stringify({ version: 1, environments: { production: { OLD_KEY: sealed } } }),
      { mode: 0o600 },
    );
    const store = new FileSecretStore(files.paths);
    expect(await store.resolve("production", "OLD_KEY")).toEqual({
      value: "old-value",
      origins: [],
    });
    expect(await store.list("production")).toEqual([
      { name: "OLD_KEY", environment: "production", createdAt: at, updatedAt: at, origins: [] },
    ]);
    await store.set("production", "NEW_KEY", "new-value", { origins: ["https://n.example.com"] });
    expect(JSON.parse(readFileSync(files.paths.file, "utf8")).version).toBe(2);
    expect(await store.resolve("production", "OLD_KEY")).toEqual({
      value: "old-value",
      origins: [],
    });
    // Binding an old secret re-seals it with its origins.
    await store.set("production", "OLD_KEY", "old-value", { origins: ["https://o.example.com"] });
    expect(await store.resolve("production", "OLD_KEY")).toEqual({
      value: "old-value",
      origins: ["https://o.example.com"],
    });
  });
});
