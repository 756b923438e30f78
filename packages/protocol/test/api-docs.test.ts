import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { API_DOC, generatedApiDoc, sameContent } from "../scripts/api-docs.ts";

it("docs/api.md lists exactly the protocol's events and records (npm run docs:api)", () => {
  const doc = readFileSync(API_DOC, "utf8");
  expect(sameContent(doc, generatedApiDoc(doc))).toBe(true);
});
