// The crash-test agent: three tools whose every run appends `${sessionId}:${toolCallId}` to a
// side-effect log, so the parent can compare what ran with what the store says was started.
import { appendFileSync } from "node:fs";
import { type AgentFunction, defineTool, useModel, useTool } from "@opencomputer/agent";
import { type ReportInput, reportValue, SCRIPT_NAME, sideEffectKey } from "./scenario.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createCrashAgent(logPath: string): AgentFunction {
  function sideEffect(sessionId: string, toolCallId: string) {
    appendFileSync(logPath, `${sideEffectKey(sessionId, toolCallId)}\n`);
  }

  const note = defineTool({
    name: "note",
    description: "Writes a note to the side-effect log.",
    input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    run: ({ input, sessionId, toolCallId }) => {
      sideEffect(sessionId, toolCallId);
      return { noted: input.text as string };
    },
  });

  const slow = defineTool({
    name: "slow",
    description: "Waits a few milliseconds, then writes to the side-effect log.",
    input: { type: "object", properties: { tag: { type: "string" } } },
    run: async ({ input, sessionId, toolCallId }) => {
      const ms = Math.floor(Math.random() * 6);
      await sleep(ms);
      sideEffect(sessionId, toolCallId);
      return { tag: (input.tag as string | undefined) ?? null, waitedMs: ms };
    },
  });

  const report = defineTool({
    name: "report",
    description: "Reports the session result.",
    result: true,
    input: {
      type: "object",
      properties: { n: { type: "integer" }, label: { type: "string" } },
      required: ["n", "label"],
    },
    output: {
      type: "object",
      properties: { label: { type: "string" }, doubled: { type: "integer" } },
      required: ["label", "doubled"],
      additionalProperties: false,
    },
    run: ({ input, sessionId, toolCallId }) => {
      sideEffect(sessionId, toolCallId);
      return reportValue(input as unknown as ReportInput);
    },
  });

  function crashAgent(): string {
    useModel(`script/${SCRIPT_NAME}`);
    useTool(note);
    useTool(slow);
    useTool(report);
    return "You are the crash-test agent. Take notes, report a result, then answer.";
  }

  return crashAgent;
}
