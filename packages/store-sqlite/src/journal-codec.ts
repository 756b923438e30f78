// How one commit-journal record's statements are laid out (journal.ts has the record header).
//
// A record is built as one string while the change runs and written as UTF-8 into one reusable
// buffer after the header's room, at the end: one encoding call per record, where encoding each
// argument into the buffer took one call per string (most of a record's cost). Payload:
//   [format u8 = 2] then UTF-8 text; per statement: <sql length>:<sql><argument count>; then per
//   argument: `z` null · `n<number>;` · `s<length>:<text>` · `a<count>;` and its items ·
//   `b<length>:<base64>` bytes · `j<length>:<JSON>` anything else (named parameters).
//   Lengths count UTF-16 units (JavaScript string lengths), so the reader decodes the text once
//   and slices it. A lone surrogate becomes U+FFFD, one unit, as SQLite stores it too.
// Payloads of earlier versions are still read, so a journal one of them left replays: format 1
// (binary: u32 byte lengths, f64 numbers) and JSON arrays (a payload starting with "[").

import { crc32 } from "node:zlib";
import { StoreError } from "@opencomputer/runtime";

/** One executed statement: its SQL text and the arguments it was run with. */
export type JournalStatement = [sql: string, args: unknown[]];

/** Bytes before the payload: length, checksum, seq, file id (journal.ts). */
export const RECORD_HEADER = 24;

const FORMAT_BINARY = 1;
const FORMAT_TEXT = 2;
/** The checksum of the format byte alone, which the payload's checksum continues from. */
const FORMAT_TEXT_CRC = crc32(Buffer.from([FORMAT_TEXT]));
const INITIAL_BYTES = 16 * 1024;
const MAX_KEPT_BYTES = 1024 * 1024;
const FORMAT_JSON = 0x5b; // "["

// Tags of format 1.
const NULL = 0;
const NUMBER = 1;
const STRING = 2;
const ARRAY = 3;
const BYTES = 4;
const JSON_TEXT = 5;

/** One record under construction: its statements as text, encoded after the header's room. */
export class RecordBuilder {
  buffer = Buffer.allocUnsafe(INITIAL_BYTES);
  /** Bytes used, header included, once `payload()` encoded the record. */
  length = RECORD_HEADER + 1;
  /** Statements added since the last reset. */
  statements = 0;
  /**
   * Whether a statement of this change changed rows, even one whose arguments could not be
   * encoded: such a change must be undone, not left in the group unjournaled.
   */
  changedRows = false;
  /** The statements added so far, as text. */
  private text = "";

  reset(): void {
    // One large change (a big result, many events) should not pin its buffer for good.
    if (this.buffer.length > MAX_KEPT_BYTES) this.buffer = Buffer.allocUnsafe(INITIAL_BYTES);
    this.text = "";
    this.length = RECORD_HEADER + 1;
    this.statements = 0;
    this.changedRows = false;
  }

  /** The payload, encoded into `buffer` after the header's room (`length` is then set). */
  payload(): Buffer {
    this.encode();
    return this.buffer.subarray(RECORD_HEADER, this.length);
  }

  /**
   * Encodes the payload into `buffer` after the header's room and sets `length`. No view of the
   * buffer is made: on Node 20 each `subarray` cost 1–3 µs until warmed up, two per record.
   */
  encode(): void {
    const text = this.text;
    // Room for the worst case (3 bytes per UTF-16 unit) without measuring a small record.
    let need = RECORD_HEADER + 1 + text.length * 3;
    if (need > this.buffer.length && text.length > INITIAL_BYTES) {
      need = RECORD_HEADER + 1 + Buffer.byteLength(text);
    }
    if (need > this.buffer.length) {
      this.buffer = Buffer.allocUnsafe(Math.max(need, this.buffer.length * 2));
    }
    this.buffer[RECORD_HEADER] = FORMAT_TEXT;
    this.length = RECORD_HEADER + 1 + this.buffer.write(text, RECORD_HEADER + 1, "utf8");
  }

  /**
   * The CRC-32 of the encoded payload, computed from the text (Node encodes a string as UTF-8,
   * as `encode` does), so no view of the payload's bytes is needed.
   */
  checksum(): number {
    return crc32(this.text, FORMAT_TEXT_CRC);
  }

  /** Appends a statement that changed rows; all or nothing. */
  add(sql: string, args: readonly unknown[]): void {
    this.changedRows = true;
    let out = `${sql.length}:${sql}${args.length};`;
    for (let i = 0; i < args.length; i++) out += encodeValue(args[i], sql);
    this.text += out;
    this.statements++;
  }
}

function encodeValue(value: unknown, sql: string): string {
  if (typeof value === "string") return `s${value.length}:${value}`;
  if (typeof value === "number") return Object.is(value, -0) ? "n-0;" : `n${value};`;
  if (value === null || value === undefined) return "z";
  if (Array.isArray(value)) {
    let out = `a${value.length};`;
    for (let i = 0; i < value.length; i++) out += encodeValue(value[i], sql);
    return out;
  }
  if (value instanceof Uint8Array) {
    const base64 = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64");
    return `b${base64.length}:${base64}`;
  }
  // Named parameters and anything else better-sqlite3 binds: as JSON, as before.
  const json = jsonOf(value, sql);
  return `j${json.length}:${json}`;
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
  if (payload[0] === FORMAT_TEXT) return new TextReader(payload.toString("utf8", 1)).statements();
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

/** Reads format 2: the payload's text after its format byte. */
class TextReader {
  at = 0;
  constructor(private readonly text: string) {}

  statements(): JournalStatement[] {
    const statements: JournalStatement[] = [];
    while (this.at < this.text.length) {
      const sql = this.take(this.until(":"));
      const count = this.until(";");
      const args: unknown[] = new Array(count);
      for (let i = 0; i < count; i++) args[i] = this.value();
      statements.push([sql, args]);
    }
    return statements;
  }

  private value(): unknown {
    const tag = this.text[this.at++];
    switch (tag) {
      case "z":
        return null;
      case "n": {
        const end = this.text.indexOf(";", this.at);
        if (end < 0) this.cut();
        const n = Number(this.text.slice(this.at, end));
        this.at = end + 1;
        return n;
      }
      case "s":
        return this.take(this.until(":"));
      case "a": {
        const count = this.until(";");
        const out: unknown[] = new Array(count);
        for (let i = 0; i < count; i++) out[i] = this.value();
        return out;
      }
      case "b":
        return Buffer.from(this.take(this.until(":")), "base64");
      case "j":
        return JSON.parse(this.take(this.until(":")));
      default:
        if (tag === undefined) this.cut();
        throw new Error(`unknown argument tag ${JSON.stringify(tag)} at character ${this.at - 1}`);
    }
  }

  /** A decimal count that ends with `end`. */
  private until(end: string): number {
    const stop = this.text.indexOf(end, this.at);
    if (stop < 0) this.cut();
    const digits = this.text.slice(this.at, stop);
    if (!/^\d+$/.test(digits)) {
      throw new Error(
        `expected a length at character ${this.at}, found ${JSON.stringify(digits.slice(0, 20))}`,
      );
    }
    this.at = stop + 1;
    return Number(digits);
  }

  private take(length: number): string {
    if (this.at + length > this.text.length) this.cut();
    const value = this.text.slice(this.at, this.at + length);
    this.at += length;
    return value;
  }

  private cut(): never {
    throw new Error(`the record ends inside a value at character ${this.at}`);
  }
}

/** Reads format 1, the binary layout earlier versions wrote. */
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
