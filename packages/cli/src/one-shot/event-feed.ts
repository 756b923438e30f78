import { OpenComputerError } from "@opencomputer/agent";
import { readEventStream } from "@opencomputer/event-stream";
import type { SessionEvent } from "@opencomputer/protocol";

/** How the feed reaches the server's events route for one session. */
export interface FeedTransport {
  /** `GET …/events?after=` asking for Server-Sent Events; aborting `signal` closes it. */
  open(after: number, signal: AbortSignal): Promise<Response>;
  /** One JSON page of events after `after` (the same route without the stream). */
  poll(after: number, signal: AbortSignal): Promise<SessionEvent[]>;
}

export interface FeedTimings {
  /** How long `next` waits for events when there are none. */
  waitMs: number;
  /** The pause between polls while there is no stream. */
  pollMs: number;
}

/** Pauses before reconnecting after attempts that delivered nothing, doubling up to the max. */
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5000;
/** An answer to the stream request slower than this counts as a failed attempt. */
const CONNECT_MS = 10_000;
/**
 * A stream silent for this long is taken as dead (a half-open connection after a network
 * change) and reconnected: the server sends a heartbeat every 15 s by default.
 */
const STALL_MS = 45_000;

/**
 * - connecting: an attempt to open the stream is under way; `next` waits for it, not polls.
 * - streaming: events arrive as they are committed.
 * - down: the stream dropped or could not open; `next` polls until the reconnect succeeds.
 * - polling: the server answered without a stream (an older server, a proxy); polls for good.
 */
type State = "connecting" | "streaming" | "down" | "polling" | "closed";

/**
 * One session's events for the one-shot: a Server-Sent Events stream opened after the first
 * cursor, whose events are kept until the caller's cursor passes them, so `next(after)` answers
 * at once from memory. Both the stream and the polling fallback feed the same list, and an
 * event is taken only when its seq is past the last one taken, so switching between them, or
 * reconnecting after a drop (from that last seq), never repeats or skips an event.
 */
export class EventFeed {
  readonly #transport: FeedTransport;
  readonly #timings: FeedTimings;
  /** Events past the caller's cursor, ascending by seq, without gaps. */
  #received: SessionEvent[] = [];
  /** The highest seq received or acknowledged: where a reconnect or a poll starts. */
  #last: number;
  /** The caller's cursor: events at or below it have been dropped from memory. */
  #acked: number;
  #state: State = "connecting";
  readonly #closing = new AbortController();
  /** The open (or opening) stream's request, aborted by close() and by the stall watchdog. */
  #request: AbortController | null = null;
  readonly #waiters = new Set<() => void>();

  constructor(transport: FeedTransport, after: number, timings: FeedTimings) {
    this.#transport = transport;
    this.#timings = timings;
    this.#last = after;
    this.#acked = after;
    // Failures are handled inside (each one reconnects or falls back): nothing to catch here.
    void this.#run();
  }

  /** Whether close() was called: the signal that also ends the waits and an in-flight poll. */
  get #closed(): boolean {
    return this.#closing.signal.aborted;
  }

  /** Events after `after`; waits up to `waitMs` for new ones when there are none yet. */
  async next(after: number): Promise<SessionEvent[]> {
    if (this.#closed) {
      throw new OpenComputerError("closed", "The session's event feed is closed");
    }
    // An earlier cursor than before asks for events no longer kept: read them from the server.
    if (after < this.#acked) return this.#transport.poll(after, this.#closing.signal);
    this.#acknowledge(after);
    const deadline = Date.now() + this.#timings.waitMs;
    for (;;) {
      const ready = [...this.#received];
      if (ready.length > 0 || Date.now() >= deadline || this.#closed) return ready;
      if (this.#state === "connecting" || this.#state === "streaming") {
        await this.#change(deadline - Date.now());
        continue;
      }
      // No stream: poll as the CLI always did, after the last seq held (equal to `after` here,
      // since nothing past it is held).
      try {
        this.#receive(await this.#transport.poll(this.#last, this.#closing.signal));
      } catch (error) {
        if (this.#closed) return [];
        throw error;
      }
      if (this.#received.length === 0 && Date.now() < deadline) {
        // Woken early when the stream is back or events arrive.
        await this.#change(Math.min(this.#timings.pollMs, deadline - Date.now()));
      }
    }
  }

  /** Closes the stream and ends every wait, so nothing keeps the process alive. */
  close(): void {
    this.#setState("closed");
    this.#closing.abort();
    this.#request?.abort();
  }

  /** Opens the stream, and reopens it from the last seq whenever it drops, until closed. */
  async #run(): Promise<void> {
    let failures = 0;
    while (!this.#closed) {
      this.#setState("connecting");
      let alive = false;
      try {
        const streamed = await this.#stream(() => {
          alive = true;
        });
        if (!streamed) {
          if (!this.#closed) this.#setState("polling");
          return;
        }
      } catch {
        // A failed or dropped stream: reconnect below, from the last seq received.
      }
      if (this.#closed) return;
      // A stream that delivered something reconnects at once; repeated failures back off.
      failures = alive ? 0 : failures + 1;
      if (failures > 0) {
        this.#setState("down");
        await delay(
          Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (failures - 1)),
          this.#closing.signal,
        );
      }
    }
  }

  /**
   * One connection, read until it ends. Resolves false when the server answered without a
   * stream, true when the stream ended; rejects when it could not open or broke.
   */
  async #stream(onAlive: () => void): Promise<boolean> {
    const request = new AbortController();
    this.#request = request;
    let watchdog: NodeJS.Timeout | undefined;
    const watch = (ms = STALL_MS) => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => request.abort(), ms);
    };
    try {
      watch(CONNECT_MS);
      const response = await this.#transport.open(this.#last, request.signal);
      if (!response.ok || !response.body) {
        await response.body?.cancel().catch(() => {});
        throw new Error(`The event stream answered HTTP ${response.status}`);
      }
      const type = response.headers.get("content-type") ?? "";
      if (!type.toLowerCase().startsWith("text/event-stream")) {
        await response.body.cancel().catch(() => {});
        return false;
      }
      this.#setState("streaming");
      watch();
      await readEventStream<SessionEvent>(response.body, {
        events: (events) => {
          watch();
          onAlive();
          this.#receive(events);
        },
        heartbeat: () => {
          watch();
          onAlive();
        },
      });
      return true;
    } finally {
      clearTimeout(watchdog);
      this.#request = null;
    }
  }

  /** Keeps the events past the last seq held; anything at or below it was already taken. */
  #receive(events: SessionEvent[]): void {
    let added = false;
    for (const e of events) {
      if (e.seq <= this.#last) continue;
      this.#received.push(e);
      this.#last = e.seq;
      added = true;
    }
    if (added) this.#notify();
  }

  /** The caller has everything up to `after`: forget it. */
  #acknowledge(after: number): void {
    this.#acked = after;
    if (after > this.#last) this.#last = after;
    const keep = this.#received.findIndex((e) => e.seq > after);
    this.#received = keep === -1 ? [] : this.#received.slice(keep);
  }

  #setState(state: State): void {
    if (this.#state === state || this.#closed) return;
    this.#state = state;
    this.#notify();
  }

  #notify(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  /** Resolves on the next event or change of state, or after `ms`. */
  #change(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.#waiters.add(done);
    });
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (the timer is cleared either way). */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
