// The commit journal's record encoding: every argument kind comes back as it was bound, a value
// that cannot be kept is refused with nothing half-written, and records in the JSON format of
// earlier versions are still read.
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
    expect(builder.length).toBe(RECORD_HEADER + 1);
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
  });
});
