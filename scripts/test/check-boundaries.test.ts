import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { checkPackage, checkWorkspace } from "../check-boundaries.ts";

// The repository itself is checked by `npm run check:boundaries` in CI; these prove the check
// catches what it must.

let root = "";
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

function workspace(files: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), "oc-boundaries-"));
  writeFileSync(join(root, "package.json"), JSON.stringify({ devDependencies: { vitest: "1" } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const manifest = (name: string, deps: object = {}, dev: object = {}) =>
  JSON.stringify({ name, dependencies: deps, devDependencies: dev });

it("refuses an import of another package's file by path, and an undeclared package", () => {
  workspace({
    "packages/a/package.json": manifest("@x/a", { "@x/b": "1" }),
    "packages/a/src/index.ts": [
      'import { b } from "@x/b";',
      'import { c } from "@x/c";',
      'import { inner } from "../../b/src/inner.ts";',
      'import { join } from "node:path";',
      'import { own } from "./own.ts";',
    ].join("\n"),
    "packages/b/package.json": manifest("@x/b"),
  });
  const messages = checkWorkspace(root).map((v) => `${v.line}: ${v.message}`);
  expect(messages).toEqual([
    expect.stringMatching(/^2: imports @x\/c, which is not declared/),
    expect.stringMatching(/^3: imports \.\.\/\.\.\/b\/src\/inner\.ts, a file outside @x\/a/),
  ]);
});

it("lets tests use devDependencies and workspace tools, but not shipped sources", () => {
  workspace({
    "packages/a/package.json": manifest("@x/a", {}, { "@x/kit": "1" }),
    "packages/a/test/a.test.ts": 'import { kit } from "@x/kit";\nimport { it } from "vitest";',
    "packages/a/src/index.ts": 'import { kit } from "@x/kit";',
  });
  const violations = checkPackage(join(root, "packages/a"), new Set(["vitest"]));
  expect(violations).toHaveLength(1);
  expect(violations[0]).toMatchObject({ file: expect.stringContaining("src/index.ts") });
  expect(violations[0]?.message).toMatch(/only a devDependency/);
});
