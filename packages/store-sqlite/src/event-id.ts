import { randomBytes } from "node:crypto";

// Event ids only need to be unique; drawing them from a pooled buffer keeps the hot path free
// of a syscall per event.
const POOL_SIZE = 4096;
const ID_BYTES = 12;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

export function newEventId(): string {
  if (offset + ID_BYTES > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const id = pool.toString("hex", offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return `evt_${id}`;
}
