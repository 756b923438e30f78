#!/usr/bin/env node
// The agent code the CLI loads is TypeScript; tsx's loader lets Node 20 run it with nothing
// else installed. In this repository the CLI itself runs from its sources (src/main.ts, also
// through tsx); the published package ships no src/ and runs its compiled dist/main.js.
import { existsSync } from "node:fs";
import { register } from "tsx/esm/api";

register();
const source = new URL("../src/main.ts", import.meta.url);
const entry = existsSync(source) ? source : new URL("../dist/main.js", import.meta.url);
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
