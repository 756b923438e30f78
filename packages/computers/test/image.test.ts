import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, harness, output, requireBubblewrap } from "./helpers.ts";

let image: string;
let h: Harness;

beforeAll(() => {
  requireBubblewrap();
  // A small image: the host's system directories by absolute symlink (followed), merged-/usr
  // links as the host has them (mirrored), and an /etc of its own with a marker.
  image = mkdtempSync(join(tmpdir(), "oc-image-"));
  // The sandbox starts as the unprivileged user: the image must be readable by it.
  chmodSync(image, 0o755);
  for (const dir of ["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"]) {
    const host = `/${dir}`;
    if (!existsSync(host)) continue;
    const stat = lstatSync(host);
    symlinkSync(stat.isSymbolicLink() ? readlinkSync(host) : host, join(image, dir));
  }
  mkdirSync(join(image, "etc"));
  writeFileSync(join(image, "etc", "os-release"), 'ID=opencomputer-image\nNAME="Custom image"\n');
  h = harness({ imageDir: image });
});

afterAll(async () => {
  await h?.dispose();
  rmSync(image, { recursive: true, force: true });
});

describe("an operator's package image", () => {
  it("is what commands see instead of the host's system", async () => {
    const { stdout, exitCode } = output(
      await h.run("ses_image", {
        command: "cat /etc/os-release; test -e /etc/passwd && echo has-passwd || echo no-passwd",
      }),
    );
    expect(exitCode).toBe(0);
    expect(stdout).toContain("ID=opencomputer-image");
    // The host's /etc is not shown: only what the image has.
    expect(stdout).toContain("no-passwd");
  });

  it("refuses an image without bash, before anything runs", () => {
    const empty = mkdtempSync(join(tmpdir(), "oc-image-empty-"));
    try {
      expect(() => harness({ imageDir: empty })).toThrow(/bash is required at .*bin\/bash/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
