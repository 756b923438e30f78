// Fake provider APIs for model tests: a local HTTP server with queued replies, and the frames
// the real APIs stream when their server-side web search runs.
export * from "./fake-server.ts";
export * from "./web-search-frames.ts";
