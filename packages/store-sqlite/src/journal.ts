// The commit journal: an append-only file next to the database that makes each state change
// durable with one write() while SQLite commits many of them together (group-commit.ts).
//
// A record is the statements one state change ran, with their bound parameters, so replaying
// it on the state it was first applied to gives exactly the same rows (ids, timestamps and
// lease times are parameters, never computed again). Layout, little-endian:
//   [payload bytes u32][crc32 of payload u32][seq f64][file id 8 bytes][payload]
// The payload's encoding is in journal-codec.ts.
// The file id is the database's (journal_state.file_id): records another database left are
// not this one's, and reading stops at them.
// Each group writes its records from offset 0 over the previous group's (all committed by then),
// with seqs one apart. Reading takes the run of consecutive seqs from offset 0 and stops at the
// first record that is cut short (a crash mid-write: never acknowledged), fails its checksum, or
// does not continue the seqs (an older group's record beyond the end of this one's).

import {
  closeSync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  writeSync,
} from "node:fs";
import { crc32 } from "node:zlib";
import { StoreError } from "@opencomputer/runtime";
import { tighten } from "./file-modes.ts";
import {
  decodeStatements,
  type JournalStatement,
  RECORD_HEADER,
  type RecordBuilder,
} from "./journal-codec.ts";

export type { JournalStatement } from "./journal-codec.ts";

export interface JournalRecord {
  seq: number;
  statements: JournalStatement[];
}

const HEADER = RECORD_HEADER;

export class Journal {
  private readonly fd: number;
  /** The database's file id, 8 bytes; set by the group commit once it has read it. */
  private owner: Buffer = Buffer.alloc(8);
  /** `owner` as two little-endian u32s, written into each header without a copy call. */
  private ownerWords: [number, number] = [0, 0];

  constructor(
    readonly path: string,
    private readonly sync: boolean,
  ) {
    // Created if missing; written through a descriptor without O_APPEND, at chosen positions.
    closeSync(openSync(path, "a", 0o600));
    tighten(path);
    this.fd = openSync(path, "r+");
  }

  /** Binds the journal to its database: records are stamped, and read only, with this id. */
  setOwner(fileIdHex: string): void {
    const id = Buffer.from(fileIdHex, "hex");
    if (id.length !== 8) throw new Error(`a journal file id is 8 bytes; got "${fileIdHex}"`);
    this.owner = id;
    this.ownerWords = [id.readUInt32LE(0), id.readUInt32LE(4)];
  }

  /**
   * Writes the record `builder` holds at `position`, filling in its header; durable against a
   * killed process on return (and against power loss when opened with sync). Returns its length.
   */
  write(position: number, seq: number, builder: RecordBuilder): number {
    builder.encode();
    const record = builder.buffer;
    const length = builder.length;
    record.writeUInt32LE(length - HEADER, 0);
    record.writeUInt32LE(builder.checksum(), 4);
    record.writeDoubleLE(seq, 8);
    record.writeUInt32LE(this.ownerWords[0], 16);
    record.writeUInt32LE(this.ownerWords[1], 20);
    try {
      let written = 0;
      while (written < length) {
        written += writeSync(this.fd, record, written, length - written, position + written);
      }
      if (this.sync) fdatasyncSync(this.fd);
    } catch (error) {
      // The change is refused, so its record must never be replayed, even if it was written
      // whole (a failed fdatasync): blank its header. Best effort; a torn one fails anyway.
      try {
        writeSync(this.fd, Buffer.alloc(HEADER), 0, HEADER, position);
      } catch {}
      throw error;
    }
    return length;
  }

  size(): number {
    return fstatSync(this.fd).size;
  }

  /**
   * Whether the file may hold records after `appliedSeq`: only when the group that wrote last
   * (from offset 0) was not committed. One 16-byte read instead of reading the file.
   */
  mayHoldAfter(appliedSeq: number): boolean {
    const header = Buffer.allocUnsafe(HEADER);
    if (readSync(this.fd, header, 0, HEADER, 0) < HEADER) return false;
    return header.readDoubleLE(8) > appliedSeq && this.owner.equals(header.subarray(16, HEADER));
  }

  /**
   * The intact records after `appliedSeq`, in order, and where the intact part of the file ends.
   * Records up to `appliedSeq` are skipped without decoding.
   */
  read(appliedSeq: number): { records: JournalRecord[]; end: number } {
    const size = this.size();
    const buffer = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = readSync(this.fd, buffer, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    const records: JournalRecord[] = [];
    let at = 0;
    let previous: number | null = null;
    while (at + HEADER <= got) {
      const length = buffer.readUInt32LE(at);
      const end = at + HEADER + length;
      if (end > got) break;
      const seq = buffer.readDoubleLE(at + 8);
      if (previous !== null && seq !== previous + 1) break;
      if (!this.owner.equals(buffer.subarray(at + 16, at + HEADER))) break;
      const payload = buffer.subarray(at + HEADER, end);
      if (crc32(payload) !== buffer.readUInt32LE(at + 4)) break;
      if (seq > appliedSeq) records.push({ seq, statements: this.decode(seq, payload) });
      previous = seq;
      at = end;
    }
    return { records, end: at };
  }

  private decode(seq: number, payload: Buffer): JournalStatement[] {
    try {
      return decodeStatements(payload);
    } catch (error) {
      // Its checksum held, so this is not a torn write: a record this build cannot read.
      throw new StoreError(
        "journal_corrupt",
        `Record ${seq} of the commit journal ${this.path} cannot be read ` +
          `(${(error as Error).message}). Move the file aside to open the database as last committed.`,
        {},
        { cause: error },
      );
    }
  }

  /** Empties the file (on a clean close, when everything in it is committed). */
  truncate(): void {
    ftruncateSync(this.fd, 0);
  }

  close(): void {
    closeSync(this.fd);
  }
}
