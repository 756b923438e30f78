import { OpenComputerError } from "@opencomputer/agent";
import { linkedServer, readCredentials } from "./credentials.ts";

export interface ClientOptions {
  url: string;
  key: string;
  fetch?: typeof fetch;
}

/** A small client for the management API (docs/api.md). Errors are OpenComputerErrors. */
export class ApiClient {
  readonly url: string;
  readonly #key: string;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions) {
    this.url = options.url.replace(/\/+$/, "");
    this.#key = options.key;
    this.#fetch = options.fetch ?? fetch;
  }

  /**
   * The server to talk to: OPENCOMPUTER_API_URL and OPENCOMPUTER_API_KEY when set, else the
   * server `opencomputer link` linked to `dir` (or a directory above it). A usage error that
   * says what to run when there is neither.
   */
  static resolve(dir = ".", env: NodeJS.ProcessEnv = process.env): ApiClient {
    const url = env.OPENCOMPUTER_API_URL?.trim();
    const key = env.OPENCOMPUTER_API_KEY?.trim();
    if (url && key) return new ApiClient({ url, key });
    if (!url && !key) {
      const linked = linkedServer(dir, readCredentials(env));
      if (linked) return new ApiClient(linked);
    }
    const missing = [!url && "OPENCOMPUTER_API_URL", !key && "OPENCOMPUTER_API_KEY"].filter(
      Boolean,
    );
    throw new OpenComputerError(
      "usage",
      `No server for this project: run \`opencomputer login --url <server>\` then \`opencomputer link\` here, or set ${missing.join(" and ")} (opencomputer dev prints both)`,
    );
  }

  /** Same as `resolve` from the current directory (kept for callers that name the env). */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): ApiClient {
    return ApiClient.resolve(".", env);
  }

  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const { parsed } = await this.#json(method, path, {}, body, signal);
    if (parsed === undefined) {
      throw new OpenComputerError("invalid_response", `${method} ${path}: the body is not JSON`);
    }
    return parsed as T;
  }

  /**
   * `GET path` asking for Server-Sent Events, with the same key as every other request. Answers
   * the Response whatever its status or type: the caller reads the body as it arrives, and an
   * older server or a proxy may answer JSON instead. Aborting `signal` closes the connection.
   */
  stream(path: string, signal: AbortSignal): Promise<Response> {
    return this.#send("GET", path, { accept: "text/event-stream" }, undefined, signal);
  }

  /** One request with the API key; an unreachable server is a `connection_failed` error. */
  async #send(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Response> {
    try {
      return await this.#fetch(`${this.url}${path}`, {
        method,
        headers: { "x-api-key": this.#key, ...headers },
        ...(body === undefined ? {} : { body }),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new OpenComputerError(
        "connection_failed",
        `Cannot reach ${this.url}: ${(error as Error).message}`,
        {},
        { cause: error },
      );
    }
  }

  /**
   * A request with extra headers (`If-Match`, `If-None-Match`): answers the parsed body
   * (undefined for an empty one, as a 204's) and the response's ETag. Errors as `request`.
   */
  async conditional<T>(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<{ body: T | undefined; etag: string | null }> {
    const { parsed, response } = await this.#json(method, path, headers, body, undefined);
    return { body: parsed as T | undefined, etag: response.headers.get("etag") };
  }

  /**
   * A JSON request: the parsed body (undefined when empty or not JSON) and the response; an
   * error answer becomes an `OpenComputerError` with the server's code, message and path.
   */
  async #json(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: unknown,
    signal: AbortSignal | undefined,
  ): Promise<{ parsed: unknown; response: Response }> {
    const response = await this.#send(
      method,
      path,
      {
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      body === undefined ? undefined : JSON.stringify(body),
      signal,
    );
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      const error = (parsed as { error?: { code?: unknown; message?: unknown; path?: unknown } })
        ?.error;
      throw new OpenComputerError(
        typeof error?.code === "string" ? error.code : `http_${response.status}`,
        typeof error?.message === "string"
          ? error.message
          : `HTTP ${response.status} ${method} ${path}`,
        {
          status: response.status,
          ...(typeof error?.path === "string" ? { path: error.path } : {}),
        },
      );
    }
    return { parsed, response };
  }

  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.request<T>("GET", path, undefined, signal);
  }

  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>("POST", path, body);
  }

  /** `GET path`, or undefined when the server answers 404. */
  async find<T>(path: string): Promise<T | undefined> {
    try {
      return await this.get<T>(path);
    } catch (error) {
      if (error instanceof OpenComputerError && error.details.status === 404) return undefined;
      throw error;
    }
  }
}

/** Encodes a path segment. */
export const seg = (value: string): string => encodeURIComponent(value);
