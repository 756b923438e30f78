import { mkdtempSync, rmSync } from "node:fs";
import Database from "better-sqlite3";

for (const sync of ["NORMAL", "FULL", "OFF"]) {
  for (const dirBase of ["/tmp", "/dev/shm"]) {
    const dir = mkdtempSync(dirBase + "/sq-");
    const db = new Database(dir + "/x.db");
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${sync}`);
    db.exec("create table t(id integer primary key, v text)");
    const ins = db.prepare("insert into t(v) values (?)");
    const tx = db.transaction((v: string) => ins.run(v)).immediate;
    for (let i = 0; i < 500; i++) tx("x".repeat(200));
    const N = 5000;
    const s = new Float64Array(N);
    for (let i = 0; i < N; i++) {
      const t0 = process.hrtime.bigint();
      tx("x".repeat(200));
      s[i] = Number(process.hrtime.bigint() - t0);
    }
    s.sort();
    console.log(
      sync,
      dirBase,
      "p50 µs",
      (s[N / 2]! / 1000).toFixed(1),
      "p99",
      (s[Math.floor(N * 0.99)]! / 1000).toFixed(1),
      "mean",
      (s.reduce((a, b) => a + b, 0) / N / 1000).toFixed(1),
    );
    db.close();
    rmSync(dir, { recursive: true });
  }
}
