#!/usr/bin/env node
// The CLI and the agent code it loads are TypeScript; tsx's loader lets Node 20 run both
// without a separate compile step.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));
