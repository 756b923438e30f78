import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";

/**
 * A TCP proxy in front of the server, so a test can cut the console's event stream the way a
 * flaky network or a proxy's idle timeout does: both ends of the connection are destroyed
 * without an orderly end of the stream.
 */
export interface CuttingProxy {
  url: string;
  /** Destroys every open connection whose request asked for `text/event-stream`; returns how many. */
  cutStreams(): number;
  close(): Promise<void>;
}

export async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const { hostname, port } = new URL(target);
  const streams = new Set<{ client: Socket; upstream: Socket }>();
  const all = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(Number(port), hostname);
    const pair = { client, upstream };
    all.add(client);
    all.add(upstream);
    let head = "";
    client.on("data", (chunk: Buffer) => {
      // The request line and headers arrive first; keep-alive connections carry later requests
      // too, so each request on the socket is looked at.
      head = (head + chunk.toString("latin1")).slice(-8192);
      if (/accept:[^\r\n]*text\/event-stream/i.test(head)) streams.add(pair);
      else if (/\r\n\r\n/.test(head)) head = "";
    });
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => {
      streams.delete(pair);
      all.delete(client);
      all.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", drop);
    upstream.on("error", drop);
    client.on("close", drop);
    upstream.on("close", drop);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    cutStreams() {
      const cut = [...streams];
      for (const { client, upstream } of cut) {
        client.destroy();
        upstream.destroy();
      }
      streams.clear();
      return cut.length;
    },
    async close() {
      for (const socket of all) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
