// Schedules read from source: what a deployment records, and each refusal with its file, line
// and column.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BuildResult,
  buildProject,
  checkProject,
  createScheduleCatalog,
} from "../src/index.ts";
import { at, copyFixture, fixture } from "./helpers.ts";

const project = copyFixture("schedules");
let built: BuildResult;

beforeAll(async () => {
  built = await buildProject(project.dir);
});
afterAll(() => project.remove());

describe("schedules in a build", () => {
  it("records each schedule with its defaults in the agent's deployment", () => {
    expect(built.errors).toEqual([]);
    expect(built.deployments[0]!.schedules).toEqual([
      {
        id: "nightly",
        cron: "30 2 * * *",
        timezone: "UTC",
        enabled: ["production"],
        overlap: "skip",
        dispatch: {},
      },
      {
        id: "weekday-hygiene",
        cron: "0 9 * * 1-5",
        timezone: "America/Los_Angeles",
        enabled: ["production"],
        overlap: "skip",
        dispatch: {
          text: "Review stale feature flags.",
          payload: { mode: "async", repository: "acme/widgets", dryRun: true },
        },
      },
    ]);
  });

  it("lists the current deployment's schedules for schedulers", async () => {
    const listed = await createScheduleCatalog(project.dir).list();
    // An agent's first build names both aliases; later builds move development only.
    expect(listed.map((d) => [d.agentId, d.deploymentId, d.environments, d.schedule.id])).toEqual([
      ["hygiene", built.deployments[0]!.id, ["development", "production"], "nightly"],
      ["hygiene", built.deployments[0]!.id, ["development", "production"], "weekday-hygiene"],
    ]);
  });

  it("refuses bad schedules at the field, with a stable code", async () => {
    const dir = fixture("schedules-refused");
    const { errors } = await checkProject(dir);
    const file = (name: string) => `opencomputer/agents/broken/schedules/${name}.ts`;
    const found = errors.map(({ code, file, line, column }) => ({ code, file, line, column }));
    expect(found).toEqual([
      { code: "schedule_cron_invalid", ...at(dir, file("bad-cron"), "cron:") },
      { code: "schedule_not_literal", ...at(dir, file("computed"), "repo }") },
      { code: "schedule_cron_invalid", ...at(dir, file("four-fields"), "cron:") },
      { code: "schedule_timezone_invalid", ...at(dir, file("four-fields"), "timezone:") },
      { code: "schedule_not_defined", ...at(dir, file("no-define"), "export default") },
      { code: "schedule_id_mismatch", ...at(dir, file("renamed"), "id:") },
    ]);
    const bad = errors.find((e) => e.file === file("bad-cron"))!;
    expect(bad.message).toMatch(/61/);
  });
});
