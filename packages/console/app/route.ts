import { useEffect, useState } from "react";

// Hash routes (`#/sessions/<id>`): a static file server needs no fallback rules, and a reload
// or a shared link lands on the same page wherever the console is mounted.
export type Route =
  | { name: "sessions"; agent?: string }
  | { name: "new" }
  | { name: "session"; id: string }
  | { name: "agents" }
  | { name: "agent"; id: string }
  | { name: "unknown" };

export function parseRoute(hash: string): Route {
  const [path = "/", search = ""] = (hash.replace(/^#/, "") || "/").split("?");
  if (path === "/" || path === "/sessions") {
    const agent = new URLSearchParams(search).get("agent");
    return agent ? { name: "sessions", agent } : { name: "sessions" };
  }
  if (path === "/new") return { name: "new" };
  if (path === "/agents") return { name: "agents" };
  const m = /^\/(sessions|agents)\/([A-Za-z0-9_.-]+)$/.exec(path);
  if (m) return { name: m[1] === "sessions" ? "session" : "agent", id: m[2]! };
  return { name: "unknown" };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return route;
}

export function navigate(path: string): void {
  window.location.hash = path;
}
