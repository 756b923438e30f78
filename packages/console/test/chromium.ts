import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

export const CHROMIUM = process.env.OPENCOMPUTER_CHROMIUM ?? "/usr/bin/chromium";

/**
 * Debian's chromium, installed through apt when missing. playwright-core never downloads a
 * browser here: it only drives the one at `executablePath`.
 */
export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  const apt = (args: string[]) =>
    execFileSync("apt-get", args, {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      timeout: 600_000,
    });
  try {
    apt(["install", "-y", "--no-install-recommends", "chromium"]);
  } catch {
    // A fresh machine has no package lists yet.
    apt(["update"]);
    apt(["install", "-y", "--no-install-recommends", "chromium"]);
  }
  if (!existsSync(CHROMIUM))
    throw new Error(`apt-get installed chromium but ${CHROMIUM} is missing`);
  return CHROMIUM;
}
