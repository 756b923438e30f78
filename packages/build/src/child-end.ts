// How a build child that ran project code ends once it has sent its answer: it does not exit,
// it waits to be killed. Modules may leave timers, sockets or processes behind; the build kills
// the child with everything it started (process-tree.ts). Exiting here first would orphan those
// processes, out of reach of that kill when no sandbox holds them.

export function awaitKill(): void {
  // The build went away without killing us (it crashed): nothing is listening any more.
  if (!process.connected) process.exit(0);
  process.once("disconnect", () => process.exit(0));
  setInterval(() => {}, 2 ** 30);
}
