/** Time source for lifetime and idle arithmetic; injectable so tests need not wait an hour. */
export interface Clock {
  now(): number;
  setTimer(fn: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const handle = setTimeout(fn, ms);
    // A pending idle/lifetime release must not keep the process alive on its own.
    handle.unref();
    return () => clearTimeout(handle);
  },
};
