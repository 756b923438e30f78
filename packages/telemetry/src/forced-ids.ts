// Span ids are random, except for the one span whose ids must be known in advance: the turn's
// own span (turn-ids.ts). The SDK takes ids only from its IdGenerator, so this one hands out a
// forced pair for exactly the next span started, then random ids again.

import { type IdGenerator, RandomIdGenerator } from "@opentelemetry/sdk-trace";

export class ForcedIds implements IdGenerator {
  readonly #random = new RandomIdGenerator();
  #next: { traceId: string; spanId: string } | null = null;

  /** Runs `start` with the next span's ids forced (`start` must start exactly one root span). */
  with<T>(ids: { traceId: string; spanId: string }, start: () => T): T {
    this.#next = ids;
    try {
      return start();
    } finally {
      this.#next = null;
    }
  }

  // For a root span the SDK asks for the span id, then the trace id; `with` clears the pair
  // afterwards, so only the span it starts gets them.
  generateTraceId(): string {
    return this.#next?.traceId ?? this.#random.generateTraceId();
  }

  generateSpanId(): string {
    return this.#next?.spanId ?? this.#random.generateSpanId();
  }
}
