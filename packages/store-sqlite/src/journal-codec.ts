// How one commit-journal record's statements are laid out (journal.ts has the record header).
//
// A record is built in place, in one reusable buffer that starts with room for the header, while
// the change runs: no JSON of the SQL text and its arguments (which escaped every JSON column a
// second time), no joined string, no copy into a new Buffer. The write is one pwrite of the
// buffer. Payload, little-endian:
//   [format u8 = 1] then per statement: [sql: u32 length + UTF-8][argument count u32][argument…]
//   argument: [tag u8] then null: nothing · number: f64 · string: u32 length + UTF-8 ·
//             array: u32 count + arguments · bytes: u32 length + bytes · JSON: u32 length + text
// A payload that starts with "[" is the JSON array earlier versions wrote; it is still read, so a
// journal left by one of them replays.

import { StoreError } from "@opencomputer/runtime";

/** One executed statement: its SQL text and the arguments it was run with. */
export type JournalStatement = [sql: string, args: unknown[]];

/** Bytes before the payload: length, checksum, seq, file id (journal.ts). */
export const RECORD_HEADER = 24;

const FORMAT_BINARY = 1;
const INITIAL_BYTES = 16 * 1024;
const MAX_KEPT_BYTES = 1024 * 1024;
const FORMAT_JSON = 0x5b; // "["

const NULL = 0;
const NUMBER = 1;
const STRING = 2;
const ARRAY = 3;
const BYTES = 4;
const JSON_TEXT = 5;

/** One record under construction: the header's room, then the payload. */
export class RecordBuilder {
  buffer = Buffer.allocUnsafe(INITIAL_BYTES);
  /** Bytes used, header included. */
  length = RECORD_HEADER;
  /** Statements added since the last reset. */
  statements = 0;
  /**
   * Whether a statement of this change changed rows, even one whose arguments could not be
   * encoded: such a change must be undone, not left in the group unjournaled.
   */
  changedRows = false;

  reset(): void {
    // One large change (a big result, many events) should not pin its buffer for good.
    if (this.buffer.length > MAX_KEPT_BYTES) this.buffer = Buffer.allocUnsafe(INITIAL_BYTES);
    this.buffer[RECORD_HEADER] = FORMAT_BINARY;
    this.length = RECORD_HEADER + 1;
    this.statements = 0;
    this.changedRows = false;
  }

  /** The payload as written: everything after the header. */
  payload(): Buffer {
    return this.buffer.subarray(RECORD_HEADER, this.length);
  }

  /** Appends a statement that changed rows; all or nothing. */
  add(sql: string, args: readonly unknown[]): void {
    this.changedRows = true;
    const start = this.length;
    try {
      this.text(sql);
      this.ensure(4);
      this.buffer.writeUInt32LE(args.length, this.length);
      this.length += 4;
      for (let i = 0; i < args.length; i++) this.value(args[i], sql);
    } catch (error) {
      this.length = start;
      throw error;
    }
    this.statements++;
  }

  private ensure(bytes: number): void {
    const need = this.length + bytes;
    if (need <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(need, this.buffer.length * 2));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  /** u32 byte length + UTF-8; room for the worst case (3 bytes per UTF-16 unit) first. */
  private text(value: string): void {
    this.ensure(4 + value.length * 3);
    const written = this.buffer.write(value, this.length + 4);
    this.buffer.writeUInt32LE(written, this.length);
    this.length += 4 + written;
  }

  private value(value: unknown, sql: string): void {
    if (typeof value === "string") {
      this.ensure(1);
      this.buffer[this.length++] = STRING;
      this.text(value);
    } else if (typeof value === "number") {
      this.ensure(9);
      this.buffer[this.length] = NUMBER;
      this.buffer.writeDoubleLE(value, this.length + 1);
      this.length += 9;
    } else if (value === null || value === undefined) {
      this.ensure(1);
      this.buffer[this.length++] = NULL;
    } else if (Array.isArray(value)) {
      this.ensure(5);
      this.buffer[this.length] = ARRAY;
      this.buffer.writeUInt32LE(value.length, this.length + 1);
      this.length += 5;
      for (let i = 0; i < value.length; i++) this.value(value[i], sql);
    } else if (value instanceof Uint8Array) {
      this.ensure(5 + value.length);
      this.buffer[this.length] = BYTES;
      this.buffer.writeUInt32LE(value.length, this.length + 1);
      this.buffer.set(value, this.length + 5);
      this.length += 5 + value.length;
    } else {
      // Named parameters and anything else better-sqlite3 binds: as JSON, as before.
      this.ensure(1);
      this.buffer[this.length++] = JSON_TEXT;
      this.text(jsonOf(value, sql));
    }
  }
}

function jsonOf(value: unknown, sql: string): string {
  try {
    return JSON.stringify(value) ?? "null";
  } catch (error) {
    throw new StoreError(
      "invalid_value",
      `A value written to the store cannot be journaled (${sql.replace(/\s+/g, " ").slice(0, 40)}…): ` +
        (error as Error).message,
    );
  }
}

/** The statements of one intact (checksummed) payload, in either format. */
export function decodeStatements(payload: Buffer): JournalStatement[] {
  if (payload[0] === FORMAT_JSON) return JSON.parse(payload.toString("utf8"));
  if (payload[0] !== FORMAT_BINARY) {
    throw new Error(`unknown record format ${payload[0]}`);
  }
  const reader = new PayloadReader(payload);
  const statements: JournalStatement[] = [];
  while (reader.at < payload.length) {
    const sql = reader.text();
    const count = reader.u32();
    const args: unknown[] = new Array(count);
    for (let i = 0; i < count; i++) args[i] = reader.value();
    statements.push([sql, args]);
  }
  return statements;
}

class PayloadReader {
  at = 1;
  constructor(private readonly payload: Buffer) {}

  u32(): number {
    this.need(4);
    const n = this.payload.readUInt32LE(this.at);
    this.at += 4;
    return n;
  }

  text(): string {
    const length = this.u32();
    this.need(length);
    const value = this.payload.toString("utf8", this.at, this.at + length);
    this.at += length;
    return value;
  }

  value(): unknown {
    this.need(1);
    const tag = this.payload[this.at++];
    switch (tag) {
      case NULL:
        return null;
      case NUMBER: {
        this.need(8);
        const n = this.payload.readDoubleLE(this.at);
        this.at += 8;
        return n;
      }
      case STRING:
        return this.text();
      case ARRAY: {
        const count = this.u32();
        const out: unknown[] = new Array(count);
        for (let i = 0; i < count; i++) out[i] = this.value();
        return out;
      }
      case BYTES: {
        const length = this.u32();
        this.need(length);
        const bytes = Buffer.from(this.payload.subarray(this.at, this.at + length));
        this.at += length;
        return bytes;
      }
      case JSON_TEXT:
        return JSON.parse(this.text());
      default:
        throw new Error(`unknown argument tag ${tag} at byte ${this.at - 1}`);
    }
  }

  private need(bytes: number): void {
    if (this.at + bytes > this.payload.length) {
      throw new Error(`the record ends inside a value at byte ${this.at}`);
    }
  }
}
