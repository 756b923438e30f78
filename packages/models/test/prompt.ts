import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";

/** A second step of a tool-using turn: system, user, the model's call, and the tool's result. */
export const callOptions: LanguageModelV3CallOptions = {
  prompt: [
    { role: "system", content: "Be brief." },
    { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
    {
      role: "assistant",
      content: [
        { type: "tool-call", toolCallId: "call_0", toolName: "weather", input: { city: "Lyon" } },
      ],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_0",
          toolName: "weather",
          output: { type: "json", value: { tempC: 18 } },
        },
      ],
    },
  ],
  tools: [
    {
      type: "function",
      name: "weather",
      description: "Current weather for a city",
      inputSchema: {
        type: "object",
        properties: { city: { type: "string" } },
        required: ["city"],
      },
    },
  ],
};

export const fastRetry = { baseDelayMs: 1, maxDelayMs: 5, budgetMs: 2_000 };
