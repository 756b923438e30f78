// The worker process (`node --import tsx child.ts`): loads one deployment's agent and runs its
// code on the control plane's request. It starts with a minimal environment and, once the
// handshake is done, hides the IPC channel from the agent's code: only this file holds the
// means to send (and the token that makes a message count).

import { createConnection, createServer } from "node:net";
import type { AgentFunction, JsonValue } from "@opencomputer/agent";
import { RenderError } from "@opencomputer/agent/internal";
import type { CodeOutcome, Egress } from "@opencomputer/runtime";
import { AgentCode, WORKER_KEPT_RENDERS } from "@opencomputer/runtime/agent-code";
import { bridgeSocket, loopbackPort, splice } from "./gateway-bridge.ts";
import {
  type ParentMessage,
  PROTOCOL_VERSION,
  type WireError,
  type WorkerMessage,
} from "./protocol.ts";

const rawSend = process.send?.bind(process);
if (!rawSend) {
  console.error("the worker must be started by the runtime, with an IPC channel");
  process.exit(2);
}
// Agent code gets no `process.send`. That is a convenience, not the boundary: code in this
// process can still reach the channel (process._send, fd 3, Node's handles) and learn the
// token. What keeps a forged message from acting for another session is checked by the control
// plane (worker-process.ts: call ids and keys; worker-pool.ts: one session's calls at a time).
process.send = undefined;

let token = "";
let code: AgentCode | null = null;
const calls = new Map<number, AbortController>();
const progressAcks = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
let progressSeq = 0;

/**
 * A worker whose control plane is gone has nobody to answer: it exits quietly (0) instead of
 * throwing ERR_IPC_CHANNEL_CLOSED or EPIPE from a send that raced the channel's close (a
 * heartbeat, an outcome), which printed stack traces when a runtime died or dropped a worker.
 */
function quit(): void {
  process.exit(0);
}

function send(message: WorkerMessage): void {
  if (!process.connected) {
    quit();
    return;
  }
  rawSend!(message, undefined, undefined, (error: Error | null) => {
    if (error) quit();
  });
}

function wireError(error: unknown): WireError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const wire: WireError = { name: error.name, message: error.message };
  if (error.stack) wire.stack = error.stack;
  if (error instanceof RenderError) wire.renderCode = error.code;
  return wire;
}

async function init(message: Extract<ParentMessage, { type: "init" }>): Promise<void> {
  token = message.token;
  if (message.version !== PROTOCOL_VERSION) {
    send({
      type: "init_failed",
      token,
      error: { name: "Error", message: `protocol ${message.version} is not ${PROTOCOL_VERSION}` },
    });
    process.exit(1);
  }
  try {
    const loader = (await import(message.loader)) as {
      loadAgent(args: JsonValue): Promise<AgentFunction>;
    };
    code = new AgentCode(await loader.loadAgent(message.args), WORKER_KEPT_RENDERS);
  } catch (error) {
    send({ type: "init_failed", token, error: wireError(error) });
    process.exit(1);
  }
  setInterval(() => send({ type: "heartbeat", token }), message.heartbeatMs);
  send({ type: "initialized", token, pid: process.pid });
}

// Without network (microvm), the gateway's loopback port is served here and forwarded to the
// control plane's bridge socket; nothing else on loopback leads anywhere.
const bridgeDir = process.env.OC_GATEWAY_BRIDGE;
delete process.env.OC_GATEWAY_BRIDGE;
const forwarders = new Map<number, Promise<void>>();

function forwardGateway(egress: Egress | undefined): Promise<void> {
  const port = egress && bridgeDir ? loopbackPort(egress.gatewayUrl) : undefined;
  if (port === undefined || !bridgeDir) return Promise.resolve();
  let ready = forwarders.get(port);
  if (!ready) {
    ready = new Promise<void>((resolve, reject) => {
      const server = createServer((socket) =>
        splice(socket, createConnection(bridgeSocket(bridgeDir, port))),
      );
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
      server.unref();
    });
    ready.catch(() => forwarders.delete(port));
    forwarders.set(port, ready);
  }
  return ready;
}

async function call(
  message: ParentMessage & { id: number; key: string },
  fn: (signal: AbortSignal) => Promise<CodeOutcome>,
) {
  const controller = new AbortController();
  calls.set(message.id, controller);
  try {
    const egress = "egress" in message ? (message.egress as Egress | undefined) : undefined;
    await forwardGateway(egress).catch(() => {});
    const outcome = await fn(controller.signal);
    send({ type: "outcome", token, id: message.id, key: message.key, outcome });
  } finally {
    calls.delete(message.id);
  }
}

function onMessage(message: ParentMessage): void {
  if (message.type === "init") {
    void init(message);
    return;
  }
  if (!code) return;
  const agent = code;
  switch (message.type) {
    case "render": {
      try {
        const render = agent.render(message.request);
        send({ type: "rendered", token, id: message.id, key: message.key, render });
      } catch (error) {
        send({
          type: "render_failed",
          token,
          id: message.id,
          key: message.key,
          error: wireError(error),
        });
      }
      return;
    }
    case "run":
      void call(message, (signal) =>
        agent.runTool(message.render, message.tool, {
          ...message.call,
          signal,
          egress: message.egress,
          reportProgress: (metadata) => progress(message.id, message.key, metadata),
        }),
      ).then(() => {
        // The next model step needs a render: made here, right after the call, it saves the
        // control plane a round trip.
        if (!message.renderAfter) return;
        try {
          const render = agent.render(message.render.request);
          send({ type: "next_render", token, id: message.id, key: message.key, render });
        } catch (error) {
          const failure = wireError(error);
          send({ type: "next_render", token, id: message.id, key: message.key, error: failure });
        }
      });
      return;
    case "preview":
      void call(message, (signal) =>
        agent.previewTool(message.render, message.tool, {
          input: message.input,
          signal,
          egress: message.egress,
        }),
      );
      return;
    case "apply":
      void call(message, (signal) =>
        agent.applyTool(message.render, message.tool, {
          input: message.input,
          decision: message.decision,
          signal,
          egress: message.egress,
        }),
      );
      return;
    case "abort":
      calls.get(message.id)?.abort(new Error(message.reason));
      return;
    case "progress_ack": {
      const key = `${message.id}:${message.seq}`;
      const waiter = progressAcks.get(key);
      progressAcks.delete(key);
      if (message.error) waiter?.reject(new Error(message.error));
      else waiter?.resolve();
      return;
    }
  }
}

/** Progress resolves once the control plane recorded it, as it does in-process. */
function progress(id: number, key: string, metadata: JsonValue): Promise<void> {
  const seq = ++progressSeq;
  return new Promise<void>((resolve, reject) => {
    progressAcks.set(`${id}:${seq}`, { resolve, reject });
    send({ type: "progress", token, id, key, seq, metadata });
  });
}

process.on("message", (message: ParentMessage) => onMessage(message));
// The control plane went away (or dropped this worker): nothing may keep running. A channel
// error (EPIPE when the peer died mid-write) means the same.
process.on("disconnect", quit);
process.channel?.on?.("error", quit);
send({ type: "ready", version: PROTOCOL_VERSION });
