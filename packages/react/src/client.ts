import { readEventStream } from "@opencomputer/event-stream";
import { type Api, ApiError, type ApiOptions, createApi } from "./api.ts";
import { type AgentState, emptyState, foldEvents, isBusy, type MemorySave } from "./fold.ts";
import type { Session, SessionEvent } from "./types.ts";

export interface AgentClientOptions extends ApiOptions {
  /** Attach to this session. */
  sessionId?: string;
  /** Create mode: `"<agent>@<alias>"`; the session is created on the first `send`. */
  agentId?: string;
  /** Start after this seq (events at or below it are not read). Default 0. */
  after?: number;
  /**
   * How new events arrive: `"stream"` (default) keeps one Server-Sent Events connection open
   * and folds events as they are committed; `"poll"` asks for them every `pollIntervalMs`. A
   * server (or proxy, or custom `fetch`) that does not stream makes the client poll.
   */
  transport?: "stream" | "poll";
  /** Poll interval while idle (default 1000 ms); half of it while a turn runs. */
  pollIntervalMs?: number;
  /** Called once per event, in seq order, as it is folded in. */
  onEvent?: (event: SessionEvent) => void;
  /** Called once per `memory.saved` event, after `onEvent`: re-read that document. */
  onMemorySaved?: (save: MemorySave) => void;
}

export interface AgentSnapshot extends AgentState {
  sessionId: string | null;
  /** The session as `GET /sessions/<id>` last returned it (status, result, computer state). */
  session: Session | null;
  isRunning: boolean;
  /** The last failed poll or action; cleared by the next successful poll. */
  error: ApiError | null;
}

const MAX_BACKOFF_MS = 30_000;
/** The API returns at most this many events; a full page means more are waiting. */
const PAGE = 500;

function newKey(): string {
  // crypto.randomUUID exists only in secure contexts; a console on a LAN address is not one.
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === "function") return c.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

/**
 * One session, followed by polling its event log from a cursor. The framework-free half of
 * `useAgent` (subscribe/getSnapshot for useSyncExternalStore), so it runs and is tested in Node.
 * A failed poll backs off and resumes from the same cursor; it never ends the session.
 */
export class AgentClient {
  readonly api: Api;
  private options: AgentClientOptions;
  private snapshot: AgentSnapshot;
  private listeners = new Set<() => void>();
  private generation = 0;
  private wakeUp: (() => void) | null = null;
  private sending = 0;
  private sessionLoad: Promise<void> | null = null;
  private sessionStale = false;
  private creating: Promise<string> | null = null;
  /** Cleared for good when the server answers a stream request with something else. */
  private streaming: boolean;
  private closeStream: (() => void) | null = null;

  constructor(options: AgentClientOptions) {
    this.options = options;
    this.api = createApi(options);
    this.streaming = options.transport !== "poll";
    this.snapshot = {
      ...emptyState,
      cursor: options.after ?? 0,
      sessionId: options.sessionId ?? null,
      session: null,
      isRunning: false,
      error: null,
    };
  }

  /** Replaces the callbacks (a component's new `onEvent` closure) without restarting. */
  setOnEvent(
    onEvent: AgentClientOptions["onEvent"],
    onMemorySaved?: AgentClientOptions["onMemorySaved"],
  ): void {
    this.options = { ...this.options, onEvent, onMemorySaved };
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): AgentSnapshot => this.snapshot;

  /** Starts (or restarts) polling; safe to call after `dispose` (React StrictMode remounts). */
  start(): void {
    const generation = ++this.generation;
    void this.loop(generation);
  }

  /** Stops polling (and closes the stream). The session is left as it is. */
  dispose(): void {
    this.generation++;
    this.wakeUp?.();
    this.closeStream?.();
  }

  private set(patch: Partial<AgentSnapshot>): void {
    const next = { ...this.snapshot, ...patch };
    next.isRunning = this.sending > 0 || isBusy(next);
    this.snapshot = next;
    for (const listener of this.listeners) listener();
  }

  /** Polls now instead of waiting out the interval (after an action, or on a full page). */
  private wake(): void {
    this.wakeUp?.();
  }

  private sleep(ms: number, generation: number): Promise<void> {
    return new Promise((resolve) => {
      if (generation !== this.generation) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    });
  }

  private async loop(generation: number): Promise<void> {
    let failures = 0;
    const idle = this.options.pollIntervalMs ?? 1000;
    while (generation === this.generation) {
      const id = this.snapshot.sessionId;
      let again = false;
      if (id && this.streaming) {
        const opened = Date.now();
        const outcome = await this.stream(id, generation);
        if (generation !== this.generation) return;
        if (outcome === "unsupported") continue;
        // An orderly end (the server restarted, a proxy's timeout) reconnects at once, unless
        // connections keep ending as soon as they open; a failure backs off as a failed poll
        // does. Either way from the same cursor.
        if (outcome === "ended" && Date.now() - opened < idle) await this.sleep(idle, generation);
        failures = outcome === "failed" ? failures + 1 : 0;
        if (failures > 0)
          await this.sleep(Math.min(MAX_BACKOFF_MS, idle * 2 ** failures), generation);
        continue;
      }
      if (id) {
        try {
          const { events } = await this.api.events(id, this.snapshot.cursor);
          if (generation !== this.generation) return;
          failures = 0;
          const before = this.snapshot.cursor;
          this.ingest(events);
          again = events.length >= PAGE || this.snapshot.gap;
          if (this.snapshot.cursor !== before || !this.snapshot.session) this.refreshSession(id);
          else if (this.snapshot.error) this.set({ error: null });
        } catch (error) {
          if (generation !== this.generation) return;
          failures++;
          this.set({ error: toApiError(error) });
        }
      }
      if (again) continue;
      const busy = this.snapshot.isRunning ? idle / 2 : idle;
      const delay = failures > 0 ? Math.min(MAX_BACKOFF_MS, idle * 2 ** failures) : busy;
      await this.sleep(id ? delay : 60_000, generation);
    }
  }

  /**
   * Follows the session over one SSE connection from the cursor until it ends. Each batch is
   * folded as it arrives; a gap (an event past cursor + 1, which the server's ordering should
   * never produce) ends the connection, and the next one starts again from the cursor.
   */
  private async stream(
    id: string,
    generation: number,
  ): Promise<"ended" | "failed" | "unsupported"> {
    const controller = new AbortController();
    const close = () => controller.abort();
    this.closeStream = close;
    try {
      const response = await this.api.streamEvents(id, this.snapshot.cursor, controller.signal);
      if (response === null) {
        this.streaming = false;
        return "unsupported";
      }
      if (this.snapshot.error) this.set({ error: null });
      await readEventStream<SessionEvent>(response.body!, {
        events: (events) => {
          if (generation !== this.generation) return false;
          const before = this.snapshot.cursor;
          this.ingest(events);
          if (this.snapshot.cursor !== before || !this.snapshot.session) this.refreshSession(id);
          return !this.snapshot.gap;
        },
      });
      if (!this.snapshot.session) this.refreshSession(id);
      return "ended";
    } catch (error) {
      if (generation !== this.generation || controller.signal.aborted) return "ended";
      this.set({ error: toApiError(error) });
      return "failed";
    } finally {
      controller.abort();
      // A restart (React StrictMode remounts) may have opened the next stream already: its
      // closer stays, or the next dispose would leave that connection open.
      if (this.closeStream === close) this.closeStream = null;
    }
  }

  private ingest(events: SessionEvent[]): void {
    const before = this.snapshot.cursor;
    const state = foldEvents(this.snapshot, events);
    if (state === this.snapshot) return;
    this.set({ ...state, error: null });
    const { onEvent, onMemorySaved } = this.options;
    if (onEvent) for (const e of events) if (e.seq > before && e.seq <= state.cursor) onEvent(e);
    if (onMemorySaved) {
      for (const save of state.memorySaves) if (save.seq > before) onMemorySaved(save);
    }
  }

  /** Re-reads the session (status, result, computer) once per batch of new events, coalesced. */
  private refreshSession(id: string): void {
    if (this.sessionLoad) {
      this.sessionStale = true;
      return;
    }
    this.sessionLoad = this.api
      .getSession(id)
      .then((session) => {
        if (this.snapshot.sessionId === id) this.set({ session });
      })
      .catch((error: unknown) => this.set({ error: toApiError(error) }))
      .finally(() => {
        this.sessionLoad = null;
        if (this.sessionStale) {
          this.sessionStale = false;
          this.refreshSession(id);
        }
      });
  }

  /** The session's id, creating the session first in create mode (once, however often called). */
  async create(): Promise<string> {
    if (this.snapshot.sessionId) return this.snapshot.sessionId;
    const agentId = this.options.agentId;
    if (!agentId) throw new ApiError(0, { code: "no_session", message: "No sessionId or agent" });
    // One creation even when send is called twice before the first answer arrives.
    this.creating ??= this.api.createSession({ agentId }, newKey()).then((r) => r.session.id);
    try {
      const id = await this.creating;
      if (!this.snapshot.sessionId) this.set({ sessionId: id });
      return id;
    } finally {
      this.creating = null;
    }
  }

  /** Runs an action with isRunning held up until the poll it triggers sees its effect. */
  private async act<T>(action: (id: string) => Promise<T>): Promise<T> {
    this.sending++;
    this.set({});
    try {
      const result = await action(await this.create());
      this.wake();
      return result;
    } catch (error) {
      const e = toApiError(error);
      this.set({ error: e });
      throw e;
    } finally {
      this.sending--;
      this.set({});
    }
  }

  /** Queues a turn with this text; creates the session first in create mode. */
  send(text: string, mode?: "queue" | "steer" | "interrupt"): Promise<{ turnId: string }> {
    return this.act((id) =>
      this.api.sendTurn(id, { text }, { idempotencyKey: newKey(), ...(mode ? { mode } : {}) }),
    );
  }

  /** Interrupts the running turn (the session stays open). */
  stop(): Promise<unknown> {
    return this.act((id) => this.api.interrupt(id));
  }

  /** Answers the open question with an option's value or free text. */
  answer(answer: { value?: string; text?: string }): Promise<{ turnId: string }> {
    const question = this.snapshot.question;
    if (!question) {
      return Promise.reject(
        new ApiError(409, { code: "no_open_question", message: "There is no open question" }),
      );
    }
    return this.act((id) =>
      this.api.sendTurn(id, { answer: { questionId: question.id, ...answer } }),
    );
  }

  /** Approves or denies an approval card; resolves once an approved apply has settled. */
  decide(approvalId: string, decision: "approve" | "deny", decidedBy?: string) {
    return this.act(() => this.api.decide(approvalId, decision, decidedBy));
  }

  /** Runs an unconfirmed apply again (same decision id). */
  retry(approvalId: string) {
    return this.act(() => this.api.retry(approvalId));
  }

  /** Accepts an unconfirmed apply as it is. */
  dismiss(approvalId: string) {
    return this.act(() => this.api.dismiss(approvalId));
  }
}

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(0, { code: "client_error", message: String(error) });
}
