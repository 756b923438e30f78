import { type Api, createApi } from "@opencomputer/react";
import { createContext, useContext } from "react";

const KEY_SLOT = "opencomputer.apiKey";

/** The API sits where the console is mounted, minus `/console/…`: "" when served at the root. */
export const basePath = window.location.pathname.replace(/\/console(\/.*)?$/, "");

export interface Connection {
  apiKey: string;
  api: Api;
  headers: Record<string, string>;
  signOut(): void;
}

export const ConnectionContext = createContext<Connection | null>(null);

export function useConnection(): Connection {
  const c = useContext(ConnectionContext);
  if (!c) throw new Error("useConnection outside a signed-in console");
  return c;
}

/** The key lives in sessionStorage: it ends with the tab, and never lands in a URL or a cookie. */
export function storedKey(): string | null {
  return window.sessionStorage.getItem(KEY_SLOT);
}

export function storeKey(key: string | null): void {
  if (key) window.sessionStorage.setItem(KEY_SLOT, key);
  else window.sessionStorage.removeItem(KEY_SLOT);
}

export function connect(apiKey: string, signOut: () => void): Connection {
  const headers = { "x-api-key": apiKey };
  return { apiKey, headers, api: createApi({ basePath, headers }), signOut };
}
