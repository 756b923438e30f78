// Every command's help: what it does, how to call it, and an example a person can copy.
// `opencomputer <command> --help` prints one entry; `opencomputer --help` prints them all.

import { DEPLOY_USAGE } from "./deploy.ts";
import { INIT_USAGE } from "./init.ts";
import { LINK_USAGE, LOGIN_USAGE } from "./login.ts";
import { LOGS_USAGE } from "./logs.ts";
import { APPROVALS_USAGE } from "./remote/approvals.ts";
import { EVENTS_USAGE } from "./remote/events.ts";
import { MEMORY_USAGE } from "./remote/memory.ts";
import { RESULTS_USAGE } from "./remote/results.ts";
import { SCHEDULES_USAGE } from "./remote/schedules.ts";
import { SESSION_USAGE } from "./remote/session.ts";
import { SESSIONS_USAGE } from "./remote/tail.ts";
import { WEBHOOKS_USAGE } from "./remote/webhooks.ts";
import { ROLLBACK_USAGE } from "./rollback.ts";
import { SESSION_ONE_SHOT_USAGE } from "./session.ts";
import { TEST_USAGE } from "./test.ts";
import { USAGE_USAGE } from "./usage.ts";

export interface CommandHelp {
  summary: string;
  usage: string;
}

const SERVER_NOTE =
  "Talks to a server: OPENCOMPUTER_API_URL and OPENCOMPUTER_API_KEY, or the server `opencomputer link` linked to this project.";

export const HELP: Record<string, CommandHelp> = {
  init: {
    summary:
      "Create a project: package.json, tsconfig.json, one agent with a tool and a result tool, a script for the offline model. Never overwrites.",
    usage: `${INIT_USAGE}
  e.g.  opencomputer init my-agent`,
  },
  session: {
    summary:
      "Run one message on an agent and print its events (embedded store, or the server at OPENCOMPUTER_API_URL); or manage a server's sessions.",
    usage: `${SESSION_ONE_SHOT_USAGE}
  ${SESSION_USAGE}
  A first word that looks like a subcommand is refused: quote the message or put -- before it.`,
  },
  test: {
    summary:
      "Run the scenario tests beside each agent (opencomputer/agents/<id>/tests) on the embedded runtime and print a table; --crash kills the runtime at random points and checks recovery (docs/testing.md).",
    usage: TEST_USAGE,
  },
  sessions: {
    summary: `Follow a session's events. ${SERVER_NOTE}`,
    usage: `${SESSIONS_USAGE}
  e.g.  opencomputer sessions tail ses_0123… --json`,
  },
  logs: {
    summary:
      "The events of the project's sessions, one line each (time, session, agent, type, summary) or JSON Lines; from the server when one is configured, else the embedded store.",
    usage: `${LOGS_USAGE}
  e.g.  opencomputer logs --agent support --type tool.failed,turn.failed --since 1h --follow`,
  },
  results: {
    summary: `Read a session's result records. ${SERVER_NOTE}`,
    usage: `${RESULTS_USAGE}
  e.g.  opencomputer results list ses_0123… --limit 20`,
  },
  approvals: {
    summary: `List and decide approvals. ${SERVER_NOTE}`,
    usage: `${APPROVALS_USAGE}
  e.g.  opencomputer approvals approve apr_0123… --by alice`,
  },
  memory: {
    summary: `Read, create, edit, freeze and export memory documents (docs/memory.md). ${SERVER_NOTE}`,
    usage: `${MEMORY_USAGE}
  e.g.  opencomputer memory create notes workshop --title "Workshop notes"`,
  },
  webhooks: {
    summary: `Webhook URLs that start sessions (create and rotate-token show the URL once). ${SERVER_NOTE}`,
    usage: `${WEBHOOKS_USAGE}
  e.g.  opencomputer webhooks create sentry --agent triage --environment production`,
  },
  events: {
    summary: `Event subscriptions: signed HTTPS delivery of turn outcomes (create and rotate-secret show the secret once). ${SERVER_NOTE}`,
    usage: `${EVENTS_USAGE}
  e.g.  opencomputer events create https://app.example.com/oc/events --environment production`,
  },
  schedules: {
    summary: `Deployed schedules: run one now, read its run history. ${SERVER_NOTE}`,
    usage: `${SCHEDULES_USAGE}
  e.g.  opencomputer schedules run hygiene/weekday-hygiene --environment development`,
  },
  build: {
    summary: "Check the agents statically and write their deployments (.opencomputer/deployments).",
    usage: `opencomputer build [--dir DIR] [--json] [--load-timeout SECONDS]
  e.g.  opencomputer build --dir my-project`,
  },
  doctor: {
    summary: "The checks of build, writing nothing.",
    usage: `opencomputer doctor [--dir DIR] [--json] [--load-timeout SECONDS]
  e.g.  opencomputer doctor --json`,
  },
  deploy: {
    summary: `Build locally and upload the deployments to a server, moving an alias. ${SERVER_NOTE}`,
    usage: DEPLOY_USAGE,
  },
  rollback: {
    summary: `Move an alias back on a server. ${SERVER_NOTE}`,
    usage: ROLLBACK_USAGE,
  },
  login: {
    summary: "Remember a server and its API key (in your config directory, mode 0600).",
    usage: LOGIN_USAGE,
  },
  link: {
    summary: "Remember which server this project deploys to and talks to.",
    usage: LINK_USAGE,
  },
  dev: {
    summary:
      "Build, serve the API and console on the embedded store, and rebuild on changes; prints the URL and an API key.",
    usage: `opencomputer dev [--dir DIR] [--port N]
  e.g.  OPENCOMPUTER_MODEL=script/demo opencomputer dev --port 4600`,
  },
  server: {
    summary:
      "Serve the API for production on the store given; builds the project's agents at start (if it has any) and accepts deploys.",
    usage: `opencomputer server --store <file.db|postgres://...> [--dir DIR] [--port N]
  e.g.  OPENCOMPUTER_API_KEYS=$KEY opencomputer server --store postgres://localhost/agents`,
  },
  usage: {
    summary:
      "Tokens and cost over a window (default the last 30 days), per agent, session or label value; from the server, else the embedded store or --store.",
    usage: USAGE_USAGE,
  },
  keys: {
    summary: "API keys, stored hashed in .opencomputer/keys.json (a key is shown once, at create).",
    usage: `opencomputer keys create [--name N] [--project P] | keys list [--json] | keys revoke <id>   [--dir DIR]
  e.g.  opencomputer keys create --name ci`,
  },
  secrets: {
    summary:
      "Secrets for connections, encrypted in .opencomputer/secrets.json; set reads the value from stdin or a hidden prompt.",
    usage: `opencomputer secrets set NAME [--origin https://host ...] [--any-origin] | secrets list [--json]
          | secrets remove NAME   [--environment development|production] [--dir DIR]
  e.g.  echo "$TOKEN" | opencomputer secrets set GITHUB_TOKEN --origin https://api.github.com`,
  },
};

export function commandHelp(name: string): string {
  const help = HELP[name];
  return help ? `${help.summary}\n\nUsage: ${help.usage}\n` : "";
}

export function allHelp(): string {
  const lines = [
    "Usage: opencomputer <command> [options]   (opencomputer <command> --help for one)",
    "",
  ];
  for (const [name, help] of Object.entries(HELP)) {
    lines.push(`  ${name.padEnd(10)}${help.summary}`);
  }
  lines.push(
    "",
    "Environment:",
    "  OPENCOMPUTER_MODEL     Replace every agent's model, e.g. script/demo (a scripted model",
    "                         read from opencomputer/scripts/demo.json) to test an agent offline.",
    "  OPENCOMPUTER_API_URL / OPENCOMPUTER_API_KEY   The server the remote commands talk to.",
    "",
  );
  return lines.join("\n");
}

/** The known command closest to a mistyped one, if any is close. */
export function nearestCommand(word: string): string | undefined {
  return Object.keys(HELP).find(
    (name) => name.startsWith(word.slice(0, 3)) && Math.abs(name.length - word.length) <= 2,
  );
}
