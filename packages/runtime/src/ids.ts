import { randomBytes } from "node:crypto";

// Ids sort by creation time (48-bit ms timestamp first) and carry 80 random bits, so they are
// unique across processes without coordination and readable in logs by their prefix.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
let pool = randomBytes(4096);
let offset = pool.length;

/** Where the next 10 random bytes start in `pool` (a fresh pool when it runs out). */
function randomOffset(): number {
  if (offset + 10 > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  const at = offset;
  offset += 10;
  return at;
}

// The time part of the last millisecond spelled: ids made within one millisecond share it.
let lastMs = Number.NaN;
let lastTime = "";

function timePart(ms: number): string {
  if (ms === lastMs) return lastTime;
  let time = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  lastMs = ms;
  lastTime = time;
  return time;
}

export function newId(prefix: string, now = Date.now()): string {
  const time = timePart(now);
  const at = randomOffset();
  let rand = "";
  for (let i = at; i < at + 10; i++) rand += ALPHABET[pool[i]! % 32];
  return `${prefix}_${time}${rand}`;
}
