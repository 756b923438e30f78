// `opencomputer login` and `opencomputer link`: remember a server and its API key, and which
// server a project deploys to, so later commands need no environment variables
// (credentials.ts says where and how they are stored).

import { resolve } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { need, noExtra, out, parse } from "../args.ts";
import { ApiClient } from "../client.ts";
import { normalizeUrl, readCredentials, writeCredentials } from "../credentials.ts";
import { type HiddenInputIO, readHidden } from "../hidden-input.ts";

export const LOGIN_USAGE = `opencomputer login --url <server>        (the key from stdin, or typed at a hidden prompt)
  e.g.  opencomputer login --url https://agents.example.com
        echo "$KEY" | opencomputer login --url http://127.0.0.1:4600`;

export const LINK_USAGE = `opencomputer link [--dir DIR] [--url <server>]
  e.g.  opencomputer link --url https://agents.example.com   (in the project directory)`;

const defaultIO: HiddenInputIO = { stdin: process.stdin, stderr: process.stderr };

export async function loginCommand(argv: string[], io = defaultIO): Promise<number> {
  const { values, positionals } = parse(argv, { url: { type: "string" } }, LOGIN_USAGE);
  noExtra(positionals, 0, LOGIN_USAGE);
  if (!values.url) throw new OpenComputerError("usage", `Missing --url. Usage: ${LOGIN_USAGE}`);
  const url = normalizeUrl(values.url);
  const key = (await readHidden(io, `API key for ${url}`)).trim();
  if (!key) throw new OpenComputerError("usage", "No API key given (pipe it on stdin or type it)");
  // A wrong key or URL is found now, not at the first deploy.
  await new ApiClient({ url, key }).get("/agents");
  const credentials = readCredentials();
  credentials.servers[url] = { key, savedAt: new Date().toISOString() };
  const file = writeCredentials(credentials);
  out(`Logged in to ${url} (saved in ${file}).`);
  out("Next, in your project: opencomputer link");
  return 0;
}

export async function linkCommand(argv: string[]): Promise<number> {
  const options = { dir: { type: "string" }, url: { type: "string" } } as const;
  const { values, positionals } = parse(argv, options, LINK_USAGE);
  noExtra(positionals, 0, LINK_USAGE);
  const credentials = readCredentials();
  const servers = Object.keys(credentials.servers);
  let url: string;
  if (values.url) url = normalizeUrl(values.url);
  else if (servers.length === 1) url = need(servers, 0, "a server", LINK_USAGE);
  else {
    throw new OpenComputerError(
      "usage",
      servers.length === 0
        ? "Log in first: opencomputer login --url <server>"
        : `Several servers are logged in (${servers.join(", ")}); choose one with --url`,
    );
  }
  if (!credentials.servers[url]) {
    throw new OpenComputerError(
      "usage",
      `Not logged in to ${url}: run opencomputer login --url ${url}`,
    );
  }
  const project = resolve(values.dir ?? ".");
  credentials.projects[project] = { url };
  writeCredentials(credentials);
  out(`Linked ${project} to ${url}. Deploy with: opencomputer deploy`);
  return 0;
}
