// A worker's start, as the control plane sees it: the worker says `ready`, gets `init` with its
// token and what to load, and answers `initialized` or `init_failed`. Anything else, or silence
// past `startTimeoutMs`, fails the start with deployment_invalid.

import type { ChildProcess } from "node:child_process";
import { OpenComputerError } from "@opencomputer/agent";
import type { AgentLocation } from "@opencomputer/runtime";
import { type ParentMessage, PROTOCOL_VERSION, wellFormed } from "./protocol.ts";
import type { WorkerTimings } from "./worker-timings.ts";

export interface HandshakeRequest {
  child: ChildProcess;
  token: string;
  location: AgentLocation;
  timings: WorkerTimings;
  post(message: ParentMessage): void;
  /** Called when the start failed in a way that leaves the process running. */
  kill(reason: string): void;
}

/** The worker's own pid once it is initialized; rejects with a deployment_invalid error. */
export function handshake(request: HandshakeRequest): Promise<number> {
  const { child, token, location, timings } = request;
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(loadError(location, `did not start within ${timings.startTimeoutMs} ms`));
      request.kill("start timeout");
    }, timings.startTimeoutMs);
    const onMessage = (message: unknown) => {
      if (!wellFormed(message)) return;
      if (message.type === "ready") {
        if (message.version !== PROTOCOL_VERSION) {
          clearTimeout(timer);
          reject(
            loadError(location, `speaks protocol ${message.version}, not ${PROTOCOL_VERSION}`),
          );
          request.kill("protocol mismatch");
          return;
        }
        request.post({
          type: "init",
          version: PROTOCOL_VERSION,
          token,
          loader: location.loader,
          args: location.args,
          heartbeatMs: timings.heartbeatMs,
        });
        return;
      }
      if (message.token !== token) return;
      if (message.type !== "initialized" && message.type !== "init_failed") return;
      clearTimeout(timer);
      child.off("message", onMessage);
      if (message.type === "initialized") resolve(message.pid);
      else reject(loadError(location, `failed to load: ${message.error.message}`));
    };
    child.on("message", onMessage);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(loadError(location, `exited while loading (${signal ?? `code ${code}`})`));
    });
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(loadError(location, `could not start: ${error.message}`));
    });
  });
}

export function loadError(location: AgentLocation, message: string): OpenComputerError {
  return new OpenComputerError(
    "deployment_invalid",
    `Deployment ${location.deploymentId}: its worker ${message}`,
    { path: "deploymentId" },
  );
}
