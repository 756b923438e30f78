import { useEffect, useState } from "react";

// Hash routes (`#/sessions/<id>`): a static file server needs no fallback rules, and a reload
// or a shared link lands on the same page wherever the console is mounted.
export type Route =
  | { name: "sessions" }
  | { name: "new" }
  | { name: "session"; id: string }
  | { name: "unknown" };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, "") || "/";
  if (path === "/" || path === "/sessions") return { name: "sessions" };
  if (path === "/new") return { name: "new" };
  const m = /^\/sessions\/([A-Za-z0-9_-]+)$/.exec(path);
  if (m) return { name: "session", id: m[1]! };
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
