// The lean named-statement query (src/prepared-query.ts) against node-postgres on a private
// cluster: it sends Describe once per statement and connection, yet every execution's rows are
// parsed by their columns' types; an error fails only its own query and makes the next execution
// describe again; and binary text[] parameters (src/text-array.ts) arrive exactly.
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PreparedQuery } from "../src/prepared-query.ts";
import { textArray } from "../src/text-array.ts";

let cluster: PrivateCluster;
let url: string;
let client: pg.Client;
let describes: number;

beforeAll(async () => {
  cluster = await startPrivateCluster();
  url = cluster.connectionString(await cluster.createDatabase());
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

beforeEach(async () => {
  client = new pg.Client({ connectionString: url, pipeline: true } as pg.ClientConfig);
  await client.connect();
  // Every Describe the client writes goes through the connection's `describe`.
  const connection = (client as unknown as { connection: { describe(m: unknown): void } })
    .connection;
  const describe = connection.describe.bind(connection);
  describes = 0;
  connection.describe = (message) => {
    describes++;
    describe(message);
  };
});

afterEach(async () => {
  await client.end();
});

function run<R extends pg.QueryResultRow>(name: string, text: string, values: unknown[]) {
  return new Promise<pg.QueryResult<R>>((resolve, reject) => {
    const query = new PreparedQuery(name, text, values, (error, result) =>
      error ? reject(error) : resolve(result as pg.QueryResult<R>),
    );
    client.query(query as unknown as pg.Submittable);
  });
}

const TYPED = `SELECT $1::int AS n, $2::text AS t, $3::json AS j, $4::bool AS b, $5::bigint AS big`;

describe("PreparedQuery", () => {
  it("describes a statement once per connection and parses every execution's rows by type", async () => {
    const rows = [];
    for (let i = 0; i < 5; i++) {
      const result = await run("typed", TYPED, [
        i,
        `t${i}`,
        `{"i":${i}}`,
        i % 2 === 0,
        2 ** 53 + i,
      ]);
      rows.push(result.rows);
      expect(result.fields.map((f) => f.name)).toEqual(["n", "t", "j", "b", "big"]);
    }
    expect(describes).toBe(1);
    expect(rows.map((r) => r[0])).toEqual(
      Array.from({ length: 5 }, (_, i) => ({
        n: i,
        t: `t${i}`,
        j: { i },
        b: i % 2 === 0,
        big: String(2 ** 53 + i),
      })),
    );
    // Rows are separate objects, not one template shared between executions.
    expect(rows[0]![0]).not.toBe(rows[1]![0]);
  });

  it("keeps every answer with its own query when many are in flight", async () => {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        run<{ n: number }>("echo", "SELECT $1::int AS n, $1::int * 2 AS twice", [i]),
      ),
    );
    expect(answers.map((a) => a.rows)).toEqual(
      Array.from({ length: 100 }, (_, i) => [{ n: i, twice: i * 2 }]),
    );
    // The first is still unanswered when the rest are written, so each of those describes too.
    const after = describes;
    await run("echo", "SELECT $1::int AS n, $1::int * 2 AS twice", [7]);
    expect(describes).toBe(after);
  });

  it("fails only the query at fault, and describes again after an error", async () => {
    const divide = (d: number) => run<{ q: number }>("divide", "SELECT 10 / $1::int AS q", [d]);
    expect((await divide(2)).rows).toEqual([{ q: 5 }]);
    expect(describes).toBe(1);
    const outcomes = await Promise.allSettled([divide(5), divide(0), divide(1)]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: "22012" });
    expect((outcomes[2] as PromiseFulfilledResult<pg.QueryResult>).value.rows).toEqual([{ q: 10 }]);
    expect((await divide(10)).rows).toEqual([{ q: 1 }]);
    expect(describes).toBe(2);
  });

  it("refuses a value it cannot serialise, and the statement stays usable", async () => {
    const echo = (value: unknown) => run<{ v: string }>("value", "SELECT $1::text AS v", [value]);
    expect((await echo("a")).rows).toEqual([{ v: "a" }]);
    const unserialisable = {
      toPostgres() {
        throw new Error("cannot serialise");
      },
    };
    const outcomes = await Promise.allSettled([echo("b"), echo(unserialisable), echo("c")]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe("cannot serialise");
    expect((await echo("d")).rows).toEqual([{ v: "d" }]);
    // Parsed once; described again after the error, as after any error.
    expect(describes).toBe(2);
  });

  it("returns a statement's rows and row count when it yields no rows", async () => {
    const none = await run("none", "SELECT 1 AS one WHERE $1::bool", [false]);
    const again = await run("none", "SELECT 1 AS one WHERE $1::bool", [false]);
    const some = await run("none", "SELECT 1 AS one WHERE $1::bool", [true]);
    expect([none.rows, again.rows, some.rows]).toEqual([[], [], [{ one: 1 }]]);
    expect([none.rowCount, some.rowCount]).toEqual([0, 1]);
  });
});

describe("textArray", () => {
  const HOSTILE = [
    "",
    "plain",
    'quote " and backslash \\ and \\"',
    "{braces,commas}",
    "NULL",
    "null",
    " spaces ",
    "new\nline\ttab",
    "é ü 中文 🙂",
    "lone \ud800 surrogate",
    JSON.stringify({ a: ['x"y', "\\"], b: null }),
    "x".repeat(1 << 20),
  ];
  const echo = (values: unknown) =>
    run<{ a: (string | null)[] | null }>("echo_text", "SELECT $1::text[] AS a", [values]);

  it("sends every string exactly as node-postgres' text format would", async () => {
    const [binary, text] = await Promise.all([echo(textArray(HOSTILE)), echo(HOSTILE)]);
    expect(binary.rows[0]!.a).toEqual(text.rows[0]!.a);
    // A lone surrogate is not UTF-8: both paths send U+FFFD, as Buffer encodes it.
    expect(binary.rows[0]!.a).toEqual(HOSTILE.map((s) => s.replace("\ud800", "\ufffd")));
  });

  it("sends null and undefined as NULL, and an empty array as an empty array", async () => {
    expect((await echo(textArray([null, "a", undefined, ""]))).rows[0]!.a).toEqual([
      null,
      "a",
      null,
      "",
    ]);
    expect((await echo(textArray([]))).rows[0]!.a).toEqual([]);
    const dims = await run<{ d: string | null; l: number | null }>(
      "dims",
      "SELECT array_dims($1::text[]) AS d, array_lower($1::text[], 1) AS l",
      [textArray(["a", "b"])],
    );
    expect(dims.rows).toEqual([{ d: "[1:2]", l: 1 }]);
  });

  it("is refused by the server for a NUL character, as text would be", async () => {
    await expect(echo(textArray(["a\u0000b"]))).rejects.toMatchObject({ code: "22021" });
    await expect(echo(["a\u0000b"])).rejects.toMatchObject({ code: "22021" });
  });
});
