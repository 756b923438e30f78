// Scenario test modules (`opencomputer/agents/<id>/tests/*.test.ts`) are project code: they are
// imported, and their scoring functions called, in one child process started the way the build
// loads tool modules (startLoadProcess: the bubblewrap sandbox where it can be had, else a plain
// process with a minimal environment), never in the CLI that holds the store and the secrets.
// The child stays up while the tests run, so scores are computed where the module was loaded.

import { siblingModule } from "@opencomputer/workers";
import { buildIsolation } from "./isolation.ts";
import { type LoadProcess, startLoadProcess } from "./load-process.ts";
import { openProject } from "./project.ts";

export type ScenarioLoadMessage = Array<
  | { file: string; scenarios: Array<{ export: string; scenario: unknown }> }
  | { file: string; error: string }
>;
export interface ScoreRequest {
  id: number;
  file: string;
  score: number;
  text: string;
}
export type ScoreAnswer = { id: number; value: number } | { id: number; error: string };

export interface ScenarioModules {
  loaded: ScenarioLoadMessage;
  /** Calls the scoring function `{ $score: score }` of `file` on `text`, in the child. */
  score(file: string, score: number, text: string): Promise<number>;
  close(): void;
}

const CHILD_SCRIPT = siblingModule(import.meta.url, "scenario-child");

export async function loadScenarioModules(
  projectDir: string,
  files: string[],
  timeoutMs = 30_000,
): Promise<ScenarioModules> {
  const project = openProject(projectDir);
  const started = startLoadProcess(
    project,
    buildIsolation(project.root),
    CHILD_SCRIPT,
    [JSON.stringify(files)],
    ["ignore", "ignore", "pipe", "ipc"],
  );
  let stderr = "";
  started.child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-2000);
  });
  const loaded = await firstAnswer(started, timeoutMs, () => stderr);
  let next = 0;
  const waiting = new Map<number, (answer: ScoreAnswer) => void>();
  started.child.on("message", (message) => {
    const answer = message as ScoreAnswer;
    waiting.get(answer.id)?.(answer);
    waiting.delete(answer.id);
  });
  started.child.on("exit", () => {
    for (const [id, resolve] of waiting) resolve({ id, error: "the scoring process exited" });
    waiting.clear();
  });
  return {
    loaded,
    score(file, score, text) {
      const id = next++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`the scoring function took longer than ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.set(id, (answer) => {
          clearTimeout(timer);
          if ("value" in answer) resolve(answer.value);
          else reject(new Error(answer.error));
        });
        started.child.send({ id, file, score, text } satisfies ScoreRequest);
      });
    },
    close: () => started.stop(),
  };
}

function firstAnswer(
  started: LoadProcess,
  timeoutMs: number,
  stderr: () => string,
): Promise<ScenarioLoadMessage> {
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      started.stop();
      reject(new Error(`loading the scenario test modules failed: ${why}`));
    };
    const timer = setTimeout(() => fail(`no answer within ${timeoutMs} ms`), timeoutMs);
    started.child.once("message", (message) => {
      clearTimeout(timer);
      resolve((message as { loaded: ScenarioLoadMessage }).loaded);
    });
    started.child.once("exit", () => fail(stderr().trim() || "the loader exited"));
    started.child.once("error", (error) => fail(error.message));
  });
}
