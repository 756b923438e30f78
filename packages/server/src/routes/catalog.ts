import { onlyFields, readJsonObject } from "../body.ts";
import { HttpError, invalidInput } from "../errors.ts";
import { checkQuery } from "../query.ts";
import { json } from "../respond.ts";
import type { Router } from "../router.ts";

type Alias = "development" | "production";

/**
 * What the server lists under `/agents` and `/deployments`, and the deploy and rollback writes.
 * The server does not know how deployments are stored; `@opencomputer/build`'s
 * `createDeploymentCatalog` is the implementation `opencomputer dev` and `server` pass in.
 */
export interface Catalog {
  agents(): Promise<readonly object[]>;
  /** Throws an error with code `not_found` for an unknown agent. */
  agent?(id: string): Promise<object>;
  deployments(filter?: { agentId?: string }): Promise<readonly object[]>;
  /** Throws an error with code `not_found` for an unknown id. */
  deployment(id: string): Promise<object>;
  /** Checks and stores an uploaded deployment, then moves `alias` to it. */
  upload?(
    manifest: unknown,
    bundle: Uint8Array,
    alias: Alias,
    /** The skills' files, by path relative to the deployment's directory. */
    files?: ReadonlyMap<string, Uint8Array>,
  ): Promise<{ deployment: object; created: boolean; agent: object }>;
  moveAlias?(agentId: string, alias: Alias, deploymentId: string): Promise<object>;
  rollback?(agentId: string, alias: Alias, to?: string): Promise<object>;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** An upload carries the bundle (and skill files) as base64: 16 MiB of bundle, plus the manifest. */
export const MAX_UPLOAD_BYTES = 24 * 1024 * 1024;

export function catalogRoutes(router: Router, catalog: Catalog): void {
  router.add("GET", "/agents", async (_request, _params, url) => {
    checkQuery(url, []);
    return json(200, { agents: await catalog.agents() });
  });
  router.add("GET", "/agents/:id", async (_request, { id }, url) => {
    checkQuery(url, []);
    const agent = catalog.agent
      ? await catalog.agent(id!)
      : (await catalog.agents()).find((a) => (a as { id?: unknown }).id === id);
    if (!agent) throw new HttpError("not_found", `No agent "${id}" is deployed here`);
    return json(200, { agent });
  });
  router.add("GET", "/deployments", async (_request, _params, url) => {
    checkQuery(url, ["agent"]);
    const agent = url.searchParams.get("agent");
    const deployments = await catalog.deployments(agent ? { agentId: agent } : {});
    return json(200, { deployments: deployments });
  });
  router.add("GET", "/deployments/:id", async (_request, { id }, url) => {
    checkQuery(url, []);
    return json(200, { deployment: await catalog.deployment(id!) });
  });
  router.add("POST", "/deployments", async (request, _params, url) => {
    checkQuery(url, []);
    const upload = writable(catalog.upload, "uploads");
    const body = await readJsonObject(request, MAX_UPLOAD_BYTES);
    onlyFields(body, ["manifest", "bundle", "alias", "files"]);
    if (typeof body.bundle !== "string" || !BASE64.test(body.bundle)) {
      throw invalidInput("bundle", "must be the bundle's bytes in base64");
    }
    const files = uploadedFiles(body.files);
    const alias = aliasOf(body.alias ?? "development", "alias");
    const stored = await upload.call(
      catalog,
      body.manifest,
      Buffer.from(body.bundle, "base64"),
      alias,
      files,
    );
    return json(stored.created ? 201 : 200, stored);
  });
  router.add("POST", "/agents/:id/aliases/:alias", async (request, { id, alias }, url) => {
    checkQuery(url, []);
    const move = writable(catalog.moveAlias, "alias moves");
    const body = await readJsonObject(request, 4096);
    onlyFields(body, ["deploymentId"]);
    if (typeof body.deploymentId !== "string") {
      throw invalidInput("deploymentId", "must be a deployment id");
    }
    const agent = await move.call(catalog, id!, aliasOf(alias, "alias"), body.deploymentId);
    return json(200, { agent });
  });
  router.add("POST", "/agents/:id/rollback", async (request, { id }, url) => {
    checkQuery(url, []);
    const rollback = writable(catalog.rollback, "rollbacks");
    const body = await readJsonObject(request, 4096);
    onlyFields(body, ["alias", "to"]);
    if (body.to !== undefined && typeof body.to !== "string") {
      throw invalidInput("to", "must be a deployment id");
    }
    const alias = aliasOf(body.alias ?? "production", "alias");
    const agent = await rollback.call(catalog, id!, alias, body.to as string | undefined);
    return json(200, { agent });
  });
}

/** `files`: `{ "<path>": "<base64>" }`, the skills' files; their paths and digests the upload checks. */
function uploadedFiles(value: unknown): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  if (value === undefined) return files;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidInput("files", "must be an object of path to base64 bytes");
  }
  for (const [path, bytes] of Object.entries(value)) {
    if (typeof bytes !== "string" || !BASE64.test(bytes)) {
      throw invalidInput(`files.${path}`, "must be the file's bytes in base64");
    }
    files.set(path, Buffer.from(bytes, "base64"));
  }
  return files;
}

function aliasOf(value: unknown, path: string): Alias {
  if (value === "development" || value === "production") return value;
  throw invalidInput(path, `must be "development" or "production", got ${JSON.stringify(value)}`);
}

/** The catalog's write, or `not_found` when this server's catalog is read-only. */
function writable<F>(fn: F | undefined, what: string): F {
  if (!fn) throw new HttpError("not_found", `This server does not accept ${what}`);
  return fn;
}
