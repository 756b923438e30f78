import { readFile, stat } from "node:fs/promises";
import { extname, join, resolve, sep } from "node:path";

export interface ConsoleOptions {
  /** The built console (`@opencomputer/console`'s `consoleDistDir`). */
  dir: string;
}

const PREFIX = "/console";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
  ".map": "application/json; charset=utf-8",
};

// The console only talks to its own origin; it is never framed (clickjacking of Approve buttons).
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
};

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Console not built</title>
<p>The OpenComputer console has not been built. Run <code>npm run build -w @opencomputer/console</code>
(or <code>npm ci</code>, which builds it) and reload.</p>`;

/**
 * Serves the built console's files under `/console/` without an API key: they are public
 * static files, and every API call the console makes still needs `x-api-key`. Answers `null`
 * for anything else so the API handles it. `GET /` goes to the console. Paths never leave `dir`.
 */
export function createConsoleFiles(options: ConsoleOptions) {
  const root = resolve(options.dir);

  return async function consoleFiles(request: Request): Promise<Response | null> {
    if (request.method !== "GET" && request.method !== "HEAD") return null;
    const url = new URL(request.url);
    const path = url.pathname;
    if (path === "/" || path === PREFIX) return redirect(`${PREFIX}/`);
    if (!path.startsWith(`${PREFIX}/`)) return null;

    let rel: string;
    try {
      rel = decodeURIComponent(path.slice(PREFIX.length + 1));
    } catch {
      return text(400, "Bad path");
    }
    // Dot segments and hidden files are refused rather than normalised.
    if (
      rel.split("/").some((part) => part.startsWith(".")) ||
      rel.includes("\0") ||
      rel.includes("\\")
    )
      return text(404, "Not found");
    const file = resolve(root, rel || "index.html");
    if (file !== root && !file.startsWith(root + sep)) return text(404, "Not found");

    let target = file;
    if (!(await isFile(target))) {
      // A path without an extension is a page of the app: the app's index answers it.
      if (extname(rel) !== "") return text(404, "Not found");
      target = join(root, "index.html");
      if (!(await isFile(target))) {
        return new Response(NOT_BUILT, {
          status: 503,
          headers: {
            "content-type": TYPES[".html"]!,
            "cache-control": "no-store",
            ...SECURITY_HEADERS,
          },
        });
      }
    }
    const body = await readFile(target);
    // Vite names assets by content hash, so they never change; index.html must be re-read.
    const immutable = target.startsWith(join(root, "assets") + sep);
    const headers = {
      "content-type": TYPES[extname(target)] ?? "application/octet-stream",
      "content-length": String(body.byteLength),
      "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
      ...SECURITY_HEADERS,
    };
    return new Response(request.method === "HEAD" ? null : body, { status: 200, headers });
  };
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function redirect(location: string): Response {
  return new Response(null, { status: 302, headers: { location, "cache-control": "no-store" } });
}

function text(status: number, body: string): Response {
  return new Response(body, {
    status,
    headers: { "content-type": TYPES[".txt"]!, "cache-control": "no-store", ...SECURITY_HEADERS },
  });
}
