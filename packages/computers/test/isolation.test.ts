import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, harness, output, requireBubblewrap } from "./helpers.ts";

describe("isolation", () => {
  let h: Harness;
  const rootSecret = `/root/oc-secret-${randomUUID()}`;
  beforeAll(() => {
    requireBubblewrap();
    h = harness();
    writeFileSync(rootSecret, "root-secret", { mode: 0o644 });
  });
  afterAll(async () => {
    rmSync(rootSecret, { force: true });
    await h.dispose();
  });

  it("cannot read /root or the data dir outside its own workspace", async () => {
    // World-readable on purpose: only the sandbox's view may keep it out.
    const dataSecret = join(h.rootDir, "secret.txt");
    writeFileSync(dataSecret, "data-secret", { mode: 0o644 });
    const other = h.provider.workspaceDir("other-session");
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, "theirs.txt"), "theirs", { mode: 0o644 });
    const probe = [rootSecret, dataSecret, join(other, "theirs.txt"), "/work/main/package.json"]
      .map((p) => `cat ${p} 2>/dev/null && echo LEAK`)
      .join("; ");
    const result = output(await h.run("iso-read", { command: `${probe}; echo done` }));
    expect(result.stdout).toBe("done\n");
  });

  it("cannot write outside /workspace and /tmp", async () => {
    const targets = ["/x", "/etc/x", "/usr/x", "/home/x", "/root/x", "/var/x", "/proc/x"];
    const command =
      targets.map((t) => `(echo hi > ${t}) 2>/dev/null && echo WROTE ${t}`).join("; ") +
      "; echo ok > /workspace/w && echo ok > /tmp/t && echo allowed";
    const result = output(await h.run("iso-write", { command }));
    expect(result.stdout).toBe("allowed\n");
  });

  it("has no network: a server on the host's 127.0.0.1 is unreachable", async () => {
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections++;
      socket.end("hello");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const result = output(
        await h.run("iso-net", {
          command: `(exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3) 2>/dev/null && echo CONNECTED; ip -o link 2>/dev/null | wc -l; echo end`,
          timeoutSeconds: 10,
        }),
      );
      expect(result.stdout).not.toContain("CONNECTED");
      expect(result.stdout).toContain("end");
      expect(connections).toBe(0);
    } finally {
      server.close();
    }
  });

  it("runs as an unprivileged user with no environment from the runtime", async () => {
    process.env.OC_TEST_SECRET = "runtime-secret";
    const result = output(await h.run("iso-id", { command: "id -u; env" }));
    delete process.env.OC_TEST_SECRET;
    expect(result.stdout.split("\n")[0]).toBe("65534");
    expect(result.stdout).not.toContain("runtime-secret");
  });
});
