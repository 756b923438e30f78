import { describe, expect, it } from "vitest";
import { agentEnv } from "../src/agent-env.ts";
import { buildIsolation } from "../src/isolation.ts";

describe("OPENCOMPUTER_AGENT_ENV", () => {
  it("passes exactly the named variables that are set", () => {
    const env = {
      OPENCOMPUTER_AGENT_ENV: " BILLING_API_ORIGIN, REGION ,MISSING,",
      BILLING_API_ORIGIN: "http://127.0.0.1:9",
      REGION: "eu",
      OTHER: "not passed",
    };
    expect(agentEnv(env)).toEqual({ BILLING_API_ORIGIN: "http://127.0.0.1:9", REGION: "eu" });
    expect(agentEnv({ OTHER: "x" })).toEqual({});
  });

  it("refuses credentials and runtime settings by name, and malformed names", () => {
    for (const name of [
      "ANTHROPIC_API_KEY",
      "OPENCOMPUTER_API_KEYS",
      "GITHUB_TOKEN",
      "DB_PASSWORD",
    ]) {
      expect(() => agentEnv({ OPENCOMPUTER_AGENT_ENV: name, [name]: "x" })).toThrow(
        expect.objectContaining({ code: "usage", details: { path: "OPENCOMPUTER_AGENT_ENV" } }),
      );
    }
    expect(() => agentEnv({ OPENCOMPUTER_AGENT_ENV: "A B" })).toThrow(
      /"A B" is not a variable name/,
    );
  });

  it("reaches the build's isolation, and nothing else of the environment does", () => {
    const isolation = buildIsolation(process.cwd(), {
      ...process.env,
      OPENCOMPUTER_AGENT_ENV: "REGION",
      REGION: "eu",
    });
    expect(isolation.env).toEqual({ REGION: "eu" });
    expect(buildIsolation(process.cwd(), { ...process.env, REGION: "eu" }).env).toBeUndefined();
  });
});
