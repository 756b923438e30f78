// What the providers stream when their server-side web search runs, frame by frame as the real
// APIs send them (Anthropic Messages SSE; OpenAI Responses SSE), for the local fake servers.

const anthropicStart = (id: string) => ({
  event: "message_start",
  data: {
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 2048, output_tokens: 3 },
    },
  },
});

const block = (index: number, content_block: unknown) => ({
  event: "content_block_start",
  data: { type: "content_block_start", index, content_block },
});
const delta = (index: number, d: unknown) => ({
  event: "content_block_delta",
  data: { type: "content_block_delta", index, delta: d },
});
const stop = (index: number) => ({
  event: "content_block_stop",
  data: { type: "content_block_stop", index },
});
const end = (stop_reason: string, usage: Record<string, unknown>) => [
  {
    event: "message_delta",
    data: { type: "message_delta", delta: { stop_reason, stop_sequence: null }, usage },
  },
  { event: "message_stop", data: { type: "message_stop" } },
];

export const SEARCH_ID = "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE";
export const RESULTS = [
  {
    type: "web_search_result",
    title: "Paris weather forecast",
    url: "https://weather.example/paris",
    encrypted_content: "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2YSDD",
    page_age: "April 30, 2026",
  },
  {
    type: "web_search_result",
    title: "Météo Paris",
    url: "https://meteo.example/paris",
    encrypted_content: "EpIfCioIARgBIiRjNmY0ZTg4Ny1hNWIxLTQ0MmEtYjdmZi1kNzM1ZTQ3MGUzYjISDE",
    page_age: null,
  },
];

/**
 * A step that searches (server_tool_use with its query streamed as partial JSON, then
 * web_search_tool_result), answers with a citation, and calls the agent's own `lookup` tool.
 */
export const anthropicSearchStep = [
  anthropicStart("msg_search"),
  block(0, { type: "text", text: "" }),
  delta(0, { type: "text_delta", text: "Let me search." }),
  stop(0),
  block(1, { type: "server_tool_use", id: SEARCH_ID, name: "web_search", input: {} }),
  delta(1, { type: "input_json_delta", partial_json: "" }),
  delta(1, { type: "input_json_delta", partial_json: '{"query": "paris' }),
  delta(1, { type: "input_json_delta", partial_json: ' weather today"}' }),
  stop(1),
  block(2, { type: "web_search_tool_result", tool_use_id: SEARCH_ID, content: RESULTS }),
  stop(2),
  block(3, { type: "text", text: "", citations: null }),
  delta(3, {
    type: "citations_delta",
    citation: {
      type: "web_search_result_location",
      cited_text: "Sunny, 21°C in Paris today.",
      url: "https://weather.example/paris",
      title: "Paris weather forecast",
      encrypted_index: "Eo8BCioIARgBIiQ3YTAwMjY1Mi1m",
    },
  }),
  delta(3, { type: "text_delta", text: "It is sunny and 21°C." }),
  stop(3),
  block(4, { type: "tool_use", id: "toolu_lookup", name: "lookup", input: {} }),
  delta(4, { type: "input_json_delta", partial_json: '{"city": "Paris"}' }),
  stop(4),
  ...end("tool_use", {
    input_tokens: 2048,
    output_tokens: 120,
    server_tool_use: { web_search_requests: 1 },
  }),
];

/** A search that failed at Anthropic: the result block carries an error code, not results. */
export const anthropicFailedSearchStep = [
  anthropicStart("msg_failed"),
  block(0, { type: "server_tool_use", id: "srvtoolu_failed", name: "web_search", input: {} }),
  delta(0, { type: "input_json_delta", partial_json: '{"query": "too many"}' }),
  stop(0),
  block(1, {
    type: "web_search_tool_result",
    tool_use_id: "srvtoolu_failed",
    content: { type: "web_search_tool_result_error", error_code: "max_uses_exceeded" },
  }),
  stop(1),
  block(2, { type: "text", text: "" }),
  delta(2, { type: "text_delta", text: "I could not search." }),
  stop(2),
  ...end("end_turn", { output_tokens: 9 }),
];

export const anthropicFinalStep = [
  anthropicStart("msg_final"),
  block(0, { type: "text", text: "" }),
  delta(0, { type: "text_delta", text: "Sunny in Paris." }),
  stop(0),
  ...end("end_turn", { output_tokens: 5 }),
];

// OpenAI Responses API: `event:` names equal each payload's `type`.
const ev = (data: Record<string, unknown>) => ({ event: String(data.type), data });
const responseShell = (status: string) => ({
  id: "resp_1",
  object: "response",
  created_at: 1_746_000_000,
  status,
  model: "gpt-test",
  output: [],
  tools: [],
});

export const OPENAI_SEARCH_ID = "ws_67c9fa0502748190b7dd390736892e100be649c1a5ff9609";

/** A step that searches (web_search_call), answers with a url_citation, and calls `lookup`. */
export const openaiSearchStep = [
  ev({ type: "response.created", sequence_number: 0, response: responseShell("in_progress") }),
  ev({
    type: "response.output_item.added",
    sequence_number: 1,
    output_index: 0,
    item: { type: "web_search_call", id: OPENAI_SEARCH_ID, status: "in_progress" },
  }),
  ev({
    type: "response.web_search_call.in_progress",
    sequence_number: 2,
    output_index: 0,
    item_id: OPENAI_SEARCH_ID,
  }),
  ev({
    type: "response.web_search_call.searching",
    sequence_number: 3,
    output_index: 0,
    item_id: OPENAI_SEARCH_ID,
  }),
  ev({
    type: "response.web_search_call.completed",
    sequence_number: 4,
    output_index: 0,
    item_id: OPENAI_SEARCH_ID,
  }),
  ev({
    type: "response.output_item.done",
    sequence_number: 5,
    output_index: 0,
    item: {
      type: "web_search_call",
      id: OPENAI_SEARCH_ID,
      status: "completed",
      action: {
        type: "search",
        query: "paris weather today",
        sources: [{ type: "url", url: "https://weather.example/paris" }],
      },
    },
  }),
  ev({
    type: "response.output_item.added",
    sequence_number: 6,
    output_index: 1,
    item: { type: "message", id: "msg_1", status: "in_progress", role: "assistant", content: [] },
  }),
  ev({
    type: "response.content_part.added",
    sequence_number: 7,
    item_id: "msg_1",
    output_index: 1,
    content_index: 0,
    part: { type: "output_text", text: "", annotations: [] },
  }),
  ev({
    type: "response.output_text.delta",
    sequence_number: 8,
    item_id: "msg_1",
    output_index: 1,
    content_index: 0,
    delta: "It is sunny and 21°C.",
  }),
  ev({
    type: "response.output_text.annotation.added",
    sequence_number: 9,
    item_id: "msg_1",
    output_index: 1,
    content_index: 0,
    annotation_index: 0,
    annotation: {
      type: "url_citation",
      start_index: 0,
      end_index: 21,
      url: "https://weather.example/paris",
      title: "Paris weather forecast",
    },
  }),
  ev({
    type: "response.output_text.done",
    sequence_number: 10,
    item_id: "msg_1",
    output_index: 1,
    content_index: 0,
    text: "It is sunny and 21°C.",
  }),
  ev({
    type: "response.output_item.done",
    sequence_number: 11,
    output_index: 1,
    item: {
      type: "message",
      id: "msg_1",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "It is sunny and 21°C.", annotations: [] }],
    },
  }),
  ev({
    type: "response.output_item.added",
    sequence_number: 12,
    output_index: 2,
    item: {
      type: "function_call",
      id: "fc_1",
      call_id: "call_lookup",
      name: "lookup",
      arguments: "",
      status: "in_progress",
    },
  }),
  ev({
    type: "response.function_call_arguments.delta",
    sequence_number: 13,
    item_id: "fc_1",
    output_index: 2,
    delta: '{"city":"Paris"}',
  }),
  ev({
    type: "response.output_item.done",
    sequence_number: 14,
    output_index: 2,
    item: {
      type: "function_call",
      id: "fc_1",
      call_id: "call_lookup",
      name: "lookup",
      arguments: '{"city":"Paris"}',
      status: "completed",
    },
  }),
  ev({
    type: "response.completed",
    sequence_number: 15,
    response: {
      ...responseShell("completed"),
      usage: {
        input_tokens: 300,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 40,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 340,
      },
    },
  }),
];

export const openaiFinalStep = [
  ev({ type: "response.created", sequence_number: 0, response: responseShell("in_progress") }),
  ev({
    type: "response.output_item.added",
    sequence_number: 1,
    output_index: 0,
    item: { type: "message", id: "msg_2", status: "in_progress", role: "assistant", content: [] },
  }),
  ev({
    type: "response.output_text.delta",
    sequence_number: 2,
    item_id: "msg_2",
    output_index: 0,
    content_index: 0,
    delta: "Sunny in Paris.",
  }),
  ev({
    type: "response.output_item.done",
    sequence_number: 3,
    output_index: 0,
    item: {
      type: "message",
      id: "msg_2",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "Sunny in Paris.", annotations: [] }],
    },
  }),
  ev({
    type: "response.completed",
    sequence_number: 4,
    response: {
      ...responseShell("completed"),
      usage: {
        input_tokens: 400,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 405,
      },
    },
  }),
];

/** Anthropic pauses a long server-tool turn: `pause_turn`, to be resumed by sending it back. */
export const anthropicPausedStep = [
  anthropicStart("msg_paused"),
  block(0, { type: "server_tool_use", id: SEARCH_ID, name: "web_search", input: {} }),
  delta(0, { type: "input_json_delta", partial_json: '{"query": "paris weather today"}' }),
  stop(0),
  block(1, { type: "web_search_tool_result", tool_use_id: SEARCH_ID, content: RESULTS }),
  stop(1),
  ...end("pause_turn", { output_tokens: 30, server_tool_use: { web_search_requests: 1 } }),
];
