// Microvm workers have no network, yet `connection.fetch` must reach the egress gateway on the
// host's loopback. The bridge carries exactly that: the control plane listens on a unix socket
// per gateway port (in a directory bound into the sandbox), and the worker listens on the same
// loopback port inside its own network namespace and forwards there. The gateway URL the
// worker receives stays valid, and no other address is reachable.

import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The loopback port of a gateway URL, or undefined when it is not on loopback. */
export function loopbackPort(url: string): number | undefined {
  try {
    const parsed = new URL(url);
    if (!LOOPBACK.has(parsed.hostname)) return undefined;
    return Number(parsed.port || (parsed.protocol === "https:" ? 443 : 80));
  } catch {
    return undefined;
  }
}

export function bridgeSocket(dir: string, port: number): string {
  return join(dir, `gw-${port}.sock`);
}

/** Pipes two sockets together; either side closing closes both. */
export function splice(a: Socket, b: Socket): void {
  a.pipe(b).on("error", () => a.destroy());
  b.pipe(a).on("error", () => b.destroy());
  a.on("error", () => b.destroy());
  b.on("error", () => a.destroy());
  a.on("close", () => b.destroy());
  b.on("close", () => a.destroy());
}

export class GatewayBridge {
  readonly dir: string;
  private readonly servers = new Map<number, Promise<Server>>();

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "oc-bridge-"));
    // The sandboxed worker runs as another uid: it may pass through, not list.
    chmodSync(this.dir, 0o711);
  }

  /** Makes sure the socket for the URL's port exists; a URL off loopback needs none. */
  async prepare(gatewayUrl: string): Promise<void> {
    const port = loopbackPort(gatewayUrl);
    if (port === undefined) return;
    let server = this.servers.get(port);
    if (!server) {
      server = new Promise<Server>((resolve, reject) => {
        const path = bridgeSocket(this.dir, port);
        const s = createServer((inside) => splice(inside, createConnection(port, "127.0.0.1")));
        s.once("error", reject);
        s.listen(path, () => {
          chmodSync(path, 0o666);
          resolve(s);
        });
      });
      server.catch(() => this.servers.delete(port));
      this.servers.set(port, server);
    }
    await server;
  }

  async close(): Promise<void> {
    for (const server of this.servers.values()) {
      await server.then(
        (s) => new Promise<void>((resolve) => s.close(() => resolve())),
        () => {},
      );
    }
    this.servers.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
