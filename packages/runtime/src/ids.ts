import { randomBytes } from "node:crypto";

// Ids sort by creation time (48-bit ms timestamp first) and carry 80 random bits, so they are
// unique across processes without coordination and readable in logs by their prefix.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
let pool = randomBytes(4096);
let offset = pool.length;

function randomChunk(): Buffer {
  if (offset + 10 > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  const chunk = pool.subarray(offset, offset + 10);
  offset += 10;
  return chunk;
}

export function newId(prefix: string, now = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomChunk();
  let rand = "";
  for (let i = 0; i < 10; i++) rand += ALPHABET[bytes[i]! % 32];
  return `${prefix}_${time}${rand}`;
}
