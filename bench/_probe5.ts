import { mkdtempSync } from "node:fs";
import { createSqliteStore } from "@opencomputer/store-sqlite";

for (const d of ["normal", "full", "normal", "full"] as const) {
  const dir = mkdtempSync("/tmp/bx/ps-");
  const s = createSqliteStore({ path: dir + "/d.db", durability: d });
  console.log(
    d,
    s.database.pragma("page_size", { simple: true }),
    s.database.pragma("synchronous", { simple: true }),
  );
  await s.close();
}
