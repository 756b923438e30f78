import type { SessionEvent } from "@opencomputer/protocol";
import type { RouteContext } from "./context.ts";

const encoder = new TextEncoder();
/** Live events kept per stream before it falls back to reading the store. */
const MAX_BUFFERED = 500;

/** One SSE frame. The `id` is the seq, so a reconnect's Last-Event-ID is the exact cursor. */
export function frame(event: SessionEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * The session's events after `after`, then live ones, as SSE. The store is the only source:
 * signals only wake the reader, which then reads after its cursor; the cursor advances by seq,
 * so there is never a gap or a duplicate, whichever process wrote the events.
 * What wakes it: when the runtime's signal reaches every process (PostgreSQL LISTEN/NOTIFY,
 * `watchesAllProcesses`), that signal alone — a commit anywhere, or a resync after missed
 * notifications — and nothing polls. Otherwise this process's own commits plus a fallback poll
 * every `pollMs` for writes by other processes.
 * Pull-based, so a slow client holds back reading instead of growing a buffer.
 */
export function eventStream(
  ctx: RouteContext,
  sessionId: string,
  after: number,
  first: SessionEvent[],
  signal: AbortSignal,
): ReadableStream<Uint8Array> {
  let cursor = after;
  let pending: SessionEvent[] | null = first;
  let dirty = false;
  let timedOut = false;
  let wake: (() => void) | null = null;
  let lastSent = Date.now();
  // This process's commits arrive with their events: kept here (bounded), they are sent
  // without a store read when they continue the cursor exactly. Anything else — a gap, an
  // overflow, another process's write — falls back to reading the store after the cursor.
  let buffered: SessionEvent[] = [];
  let overflow = false;
  const notify = () => {
    dirty = true;
    wake?.();
  };
  const shared = ctx.sessions.watchesAllProcesses === true;
  const unsubscribe = shared
    ? ctx.sessions.watch(sessionId, (lastSeq) => {
        // A commit at or below the cursor (e.g. our own page, heard again) needs no read.
        if (lastSeq === null || lastSeq > cursor) notify();
      })
    : ctx.sessions.subscribe(sessionId, (events) => {
        if (overflow || buffered.length + events.length > MAX_BUFFERED) {
          buffered = [];
          overflow = true;
        } else buffered.push(...events);
        notify();
      });
  signal.addEventListener("abort", notify, { once: true });

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timedOut = true;
        done();
      }, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  /** Buffered events that continue the cursor without a gap, or null (then read the store). */
  function fromBuffer(): SessionEvent[] | null {
    const fresh = buffered.filter((e) => e.seq > cursor);
    const ok = !overflow && fresh.length > 0 && fresh.every((e, i) => e.seq === cursor + 1 + i);
    buffered = [];
    overflow = false;
    return ok ? fresh : null;
  }

  let cancelled = false;

  /** The next chunk to send (frames or a heartbeat); `null` once the client has gone. */
  // Whether the store may hold events past the cursor: after a page (a full one may have a
  // successor) or a wake-up. With a shared signal nothing else makes the stream read; without
  // one, the fallback poll (a timed-out wait) reads too, for other processes' writes.
  let unread = true;
  async function next(): Promise<string | null> {
    for (;;) {
      if (signal.aborted || cancelled) return null;
      let page = pending;
      pending = null;
      if (page === null && dirty && !shared) {
        page = fromBuffer();
        if (page !== null) dirty = false;
      }
      if (page === null) {
        const read = dirty || unread || (!shared && timedOut);
        dirty = false;
        unread = false;
        timedOut = false;
        page = read ? await ctx.sessions.events(sessionId, cursor) : [];
        if (page.length) unread = true;
      }
      if (page.length) {
        cursor = page[page.length - 1]!.seq;
        lastSent = Date.now();
        return page.map(frame).join("");
      }
      const idle = Date.now() - lastSent;
      if (idle >= ctx.heartbeatMs) {
        lastSent = Date.now();
        return ": heartbeat\n\n";
      }
      // A notification that arrived during the read means there may be more: read again.
      const wait = ctx.heartbeatMs - idle;
      if (!dirty) await sleep(shared ? wait : Math.min(ctx.pollMs, wait));
    }
  }

  const stop = () => {
    unsubscribe();
    signal.removeEventListener("abort", notify);
    wake?.();
  };

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // Tells EventSource how soon to reconnect after a dropped connection.
        controller.enqueue(encoder.encode("retry: 1000\n\n"));
      },
      async pull(controller) {
        try {
          const chunk = await next();
          if (chunk === null) {
            stop();
            if (!cancelled) controller.close();
          } else if (!cancelled) controller.enqueue(encoder.encode(chunk));
        } catch (error) {
          // A failed read ends the stream; the client reconnects with Last-Event-ID.
          stop();
          throw error;
        }
      },
      cancel() {
        cancelled = true;
        stop();
      },
    },
    { highWaterMark: 1 },
  );
}
