// Peak resident memory over a stretch of code. While the engine works through a burst of
// sessions the event loop may not turn for long, so a timer sampling RSS would miss the peak; the
// kernel's high-water mark (VmHWM) does not. Linux resets it when "5" is written to clear_refs;
// elsewhere the process-lifetime maximum from getrusage is the best there is.
import { readFileSync, writeFileSync } from "node:fs";

export interface PeakRss {
  bytes: number;
  /** "window": the peak since `startPeakRss`; "process": the peak since the process started. */
  scope: "window" | "process";
}

let windowed = false;

export function startPeakRss(): void {
  try {
    writeFileSync("/proc/self/clear_refs", "5");
    windowed = true;
  } catch {
    windowed = false;
  }
}

export function readPeakRss(): PeakRss {
  if (windowed) {
    try {
      const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
      if (match) return { bytes: Number(match[1]) * 1024, scope: "window" };
    } catch {
      // fall through to getrusage
    }
  }
  return { bytes: process.resourceUsage().maxRSS * 1024, scope: "process" };
}
