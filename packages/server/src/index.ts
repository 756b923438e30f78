export { type Auth, createStaticKeyAuth } from "./auth.ts";
export { DEFAULT_MAX_BODY_BYTES } from "./body.ts";
export { type ErrorBody, HttpError } from "./errors.ts";
export { createHandler, type Handler, type HandlerOptions } from "./handler.ts";
export { createKeyFileAuth, KeyFile, type StoredKey } from "./key-file.ts";
export type { Catalog } from "./routes/catalog.ts";
export { type Served, type ServeOptions, serve } from "./serve.ts";
export { frame as sseFrame } from "./sse.ts";
export { type ConsoleOptions, createConsoleFiles } from "./static.ts";
