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
  const reader = new StreamReader(ctx, sessionId, after, first, signal);
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // Tells EventSource how soon to reconnect after a dropped connection.
        controller.enqueue(encoder.encode("retry: 1000\n\n"));
      },
      async pull(controller) {
        try {
          const chunk = await reader.next();
          if (chunk === null) {
            reader.stop();
            if (!reader.cancelled) controller.close();
          } else if (!reader.cancelled) controller.enqueue(encoder.encode(chunk));
        } catch (error) {
          // A failed read ends the stream; the client reconnects with Last-Event-ID.
          reader.stop();
          throw error;
        }
      },
      cancel() {
        reader.cancelled = true;
        reader.stop();
      },
    },
    { highWaterMark: 1 },
  );
}

/** The state of one stream: its cursor, what woke it, and this process's buffered commits. */
class StreamReader {
  cancelled = false;
  private cursor: number;
  private pending: SessionEvent[] | null;
  private dirty = false;
  private timedOut = false;
  private wake: (() => void) | null = null;
  private lastSent = Date.now();
  // This process's commits arrive with their events: kept here (bounded), they are sent
  // without a store read when they continue the cursor exactly. Anything else — a gap, an
  // overflow, another process's write — falls back to reading the store after the cursor.
  private buffered: SessionEvent[] = [];
  private overflow = false;
  // Whether the store may hold events past the cursor: after a page (a full one may have a
  // successor) or a wake-up. With a shared signal nothing else makes the stream read; without
  // one, the fallback poll (a timed-out wait) reads too, for other processes' writes.
  private unread = true;
  private readonly shared: boolean;
  private readonly unsubscribe: () => void;
  private readonly notify = () => {
    this.dirty = true;
    this.wake?.();
  };

  constructor(
    private readonly ctx: RouteContext,
    private readonly sessionId: string,
    after: number,
    first: SessionEvent[],
    private readonly signal: AbortSignal,
  ) {
    this.cursor = after;
    this.pending = first;
    this.shared = ctx.sessions.watchesAllProcesses === true;
    this.unsubscribe = this.shared
      ? ctx.sessions.watch(sessionId, (lastSeq) => {
          // A commit at or below the cursor (e.g. our own page, heard again) needs no read.
          if (lastSeq === null || lastSeq > this.cursor) this.notify();
        })
      : ctx.sessions.subscribe(sessionId, (events) => {
          if (this.overflow || this.buffered.length + events.length > MAX_BUFFERED) {
            this.buffered = [];
            this.overflow = true;
          } else this.buffered.push(...events);
          this.notify();
        });
    signal.addEventListener("abort", this.notify, { once: true });
  }

  /** The next chunk to send (frames or a heartbeat); `null` once the client has gone. */
  async next(): Promise<string | null> {
    const { ctx } = this;
    for (;;) {
      if (this.signal.aborted || this.cancelled) return null;
      const page = await this.nextPage();
      if (page.length) {
        this.cursor = page[page.length - 1]!.seq;
        this.lastSent = Date.now();
        return page.map(frame).join("");
      }
      const idle = Date.now() - this.lastSent;
      if (idle >= ctx.heartbeatMs) {
        this.lastSent = Date.now();
        return ": heartbeat\n\n";
      }
      // A notification that arrived during the read means there may be more: read again.
      const wait = ctx.heartbeatMs - idle;
      if (!this.dirty) await this.sleep(this.shared ? wait : Math.min(ctx.pollMs, wait));
    }
  }

  stop(): void {
    this.unsubscribe();
    this.signal.removeEventListener("abort", this.notify);
    this.wake?.();
  }

  /** Events past the cursor: the first page, the buffer, or a store read when one is due. */
  private async nextPage(): Promise<SessionEvent[]> {
    let page = this.pending;
    this.pending = null;
    if (page === null && this.dirty && !this.shared) {
      page = this.fromBuffer();
      if (page !== null) this.dirty = false;
    }
    if (page !== null) return page;
    const read = this.dirty || this.unread || (!this.shared && this.timedOut);
    this.dirty = false;
    this.unread = false;
    this.timedOut = false;
    page = read ? await this.ctx.sessions.events(this.sessionId, this.cursor) : [];
    if (page.length) this.unread = true;
    return page;
  }

  /** Buffered events that continue the cursor without a gap, or null (then read the store). */
  private fromBuffer(): SessionEvent[] | null {
    const fresh = this.buffered.filter((e) => e.seq > this.cursor);
    const ok =
      !this.overflow && fresh.length > 0 && fresh.every((e, i) => e.seq === this.cursor + 1 + i);
    this.buffered = [];
    this.overflow = false;
    return ok ? fresh : null;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.timedOut = true;
        done();
      }, ms);
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      this.wake = done;
    });
  }
}
