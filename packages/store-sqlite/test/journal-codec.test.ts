// The commit journal's record encoding: every argument kind comes back as it was bound, a value
// that cannot be kept is refused with nothing half-written, and records in the binary and JSON
// formats of earlier versions are still read.
import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { decodeStatements, RECORD_HEADER, RecordBuilder } from "../src/journal-codec.ts";

function roundTrip(statements: [string, unknown[]][]) {
  const builder = new RecordBuilder();
  builder.reset();
  for (const [sql, args] of statements) builder.add(sql, args);
  return decodeStatements(Buffer.from(builder.payload()));
}

describe("journal record encoding", () => {
  it("gives back every kind of argument better-sqlite3 binds", () => {
    const bytes = Buffer.from([0, 1, 2, 255]);
    const decoded = roundTrip([
      ["INSERT INTO t VALUES (?, ?, ?, ?)", ["plain", 'é🧪\u0000"quoted"', "", '{"a":[1,2]}']],
      ["UPDATE t SET n = ?", [0, -1.5, 2 ** 53, Number.MAX_VALUE, -0]],
      ["UPDATE t SET x = ?", [null, undefined]],
      ["INSERT INTO t VALUES (?, ?)", [["s", 1, null, ["nested"]]]],
      ["INSERT INTO b VALUES (?)", [bytes]],
      ["INSERT INTO t VALUES (@a, @b)", [{ a: "x", b: 2 }]],
      ["SELECT 1", []],
    ]);
    expect(decoded).toEqual([
      ["INSERT INTO t VALUES (?, ?, ?, ?)", ["plain", 'é🧪\u0000"quoted"', "", '{"a":[1,2]}']],
      ["UPDATE t SET n = ?", [0, -1.5, 2 ** 53, Number.MAX_VALUE, -0]],
      ["UPDATE t SET x = ?", [null, null]],
      ["INSERT INTO t VALUES (?, ?)", [["s", 1, null, ["nested"]]]],
      ["INSERT INTO b VALUES (?)", [bytes]],
      ["INSERT INTO t VALUES (@a, @b)", [{ a: "x", b: 2 }]],
      ["SELECT 1", []],
    ]);
    expect(Object.is((decoded[1]![1] as number[])[4], -0)).toBe(true);
  });

  it("grows past its first buffer for a large value, and lets a huge one go afterwards", () => {
    const big = "x".repeat(100_000) + "é".repeat(50_000);
    expect(roundTrip([["INSERT INTO t VALUES (?)", [big, big]]])).toEqual([
      ["INSERT INTO t VALUES (?)", [big, big]],
    ]);
    const builder = new RecordBuilder();
    builder.reset();
    builder.add("INSERT INTO t VALUES (?)", ["y".repeat(2_000_000)]);
    builder.payload();
    expect(builder.buffer.length).toBeGreaterThan(2_000_000);
    builder.reset();
    expect(builder.buffer.length).toBeLessThanOrEqual(1024 * 1024);
    builder.add("INSERT INTO t VALUES (?)", ["small"]);
    expect(decodeStatements(Buffer.from(builder.payload()))).toEqual([
      ["INSERT INTO t VALUES (?)", ["small"]],
    ]);
  });

  it("refuses a value it cannot keep, and leaves the record as it was", () => {
    const builder = new RecordBuilder();
    builder.reset();
    builder.add("INSERT INTO t VALUES (?)", ["kept"]);
    const before = Buffer.from(builder.payload());
    let error: unknown;
    try {
      builder.add("UPDATE t SET n = ?", ["half", 10n]);
    } catch (e) {
      error = e;
    }
    expect((error as { code?: string }).code).toBe("invalid_value");
    expect((error as Error).message).toMatch(/UPDATE t SET n = \?/);
    // The refused statement changed rows (it ran): the change must be undone.
    expect(builder.changedRows).toBe(true);
    expect(builder.statements).toBe(1);
    expect(Buffer.from(builder.payload())).toEqual(before);
    builder.reset();
    expect(builder.changedRows).toBe(false);
    builder.payload();
    expect(builder.length).toBe(RECORD_HEADER + 1);
  });

  it("gives back lengths counted in UTF-16 units, whatever the UTF-8 bytes", () => {
    const odd = ["a:b;c", "1:x", "🧪".repeat(3), "\ud800 lone", "é;s3:abc"];
    expect(roundTrip([["S 🧪 ?", odd]])).toEqual([
      ["S 🧪 ?", odd.map((v) => v.replace("\ud800", "\ufffd"))],
    ]);
  });

  it("takes the checksum from the text, equal to the checksum of the bytes written", () => {
    for (const values of [
      ["plain ascii"],
      ["é🧪", "\ud800 lone", "end \udfff", "\u0000"],
      ["x".repeat(70_000)],
      [],
    ]) {
      const builder = new RecordBuilder();
      builder.reset();
      if (values.length > 0) builder.add("INSERT INTO t VALUES (?)", values);
      const payload = builder.payload();
      expect(builder.checksum()).toBe(crc32(payload));
    }
  });

  it("reads the binary records of the previous version", () => {
    // [format 1][sql: u32 length + UTF-8][count u32][string tag 2, u32 length, bytes][null 0]
    // [number tag 1, f64]
    const sql = Buffer.from("UPDATE t SET a = ?", "utf8");
    const parts: Buffer[] = [Buffer.from([1])];
    const u32 = (n: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(n);
      return b;
    };
    parts.push(u32(sql.length), sql, u32(3), Buffer.from([2]), u32(2), Buffer.from("é", "utf8"));
    parts.push(Buffer.from([0]), Buffer.from([1]));
    const n = Buffer.alloc(8);
    n.writeDoubleLE(-1.5);
    parts.push(n);
    expect(decodeStatements(Buffer.concat(parts))).toEqual([
      ["UPDATE t SET a = ?", ["é", null, -1.5]],
    ]);
  });

  it("reads the JSON records earlier versions wrote", () => {
    const legacy = Buffer.from(JSON.stringify([["UPDATE t SET a = ?", ["x", 1, null]]]), "utf8");
    expect(decodeStatements(legacy)).toEqual([["UPDATE t SET a = ?", ["x", 1, null]]]);
  });

  it("names what is wrong with a payload it cannot read", () => {
    expect(() => decodeStatements(Buffer.from([9, 0]))).toThrow(/unknown record format 9/);
    const builder = new RecordBuilder();
    builder.reset();
    builder.add("UPDATE t SET a = ?", ["value"]);
    const cut = Buffer.from(builder.payload()).subarray(0, builder.length - RECORD_HEADER - 2);
    expect(() => decodeStatements(cut)).toThrow(/ends inside a value/);
    const bad = Buffer.concat([Buffer.from([2]), Buffer.from("3:abc1;q", "utf8")]);
    expect(() => decodeStatements(bad)).toThrow(/unknown argument tag "q"/);
    const noLength = Buffer.concat([Buffer.from([2]), Buffer.from("x:abc", "utf8")]);
    expect(() => decodeStatements(noLength)).toThrow(/expected a length at character 0/);
  });
});
