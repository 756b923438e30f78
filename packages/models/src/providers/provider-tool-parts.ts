// How a provider adapter declares a provider-run tool and keeps its prompt sendable; which
// models serve which built-in ids is the runtime's model port (provider-tools.ts there).
import type { LanguageModelV3Prompt, LanguageModelV3ProviderTool } from "@ai-sdk/provider";

/**
 * The prompt without provider-executed calls and results whose tool is not declared in this
 * request. A step that no longer selects web search (a conditional useTool, or OpenAI's Chat
 * Completions, which has no server tools) would otherwise send the provider blocks it cannot
 * pair with a declared tool, and the API refuses the whole request. The assistant's text, which
 * already says what the search found, stays.
 */
export function withoutUndeclaredProviderParts(
  prompt: LanguageModelV3Prompt,
  declared: ReadonlySet<string>,
): LanguageModelV3Prompt {
  const executed = new Set<string>();
  for (const message of prompt) {
    if (message.role !== "assistant") continue;
    for (const part of message.content) {
      if (part.type === "tool-call" && part.providerExecuted && !declared.has(part.toolName)) {
        executed.add(part.toolCallId);
      }
    }
  }
  if (executed.size === 0) return prompt;
  const out: LanguageModelV3Prompt = [];
  for (const message of prompt) {
    if (message.role !== "assistant") {
      out.push(message);
      continue;
    }
    const content = message.content.filter(
      (part) =>
        !(
          (part.type === "tool-call" || part.type === "tool-result") &&
          executed.has(part.toolCallId)
        ),
    );
    if (content.length > 0) out.push({ ...message, content });
  }
  return out;
}

/**
 * The provider-spec declaration of an AI SDK provider tool (e.g. `anthropic.tools.webSearch_…`)
 * under our built-in id: the SDK's id picks the wire format, our name is what the model's calls
 * come back with, so events and stored messages say `web-search` whatever the provider.
 */
export function declareProviderTool(tool: unknown, name: string): LanguageModelV3ProviderTool {
  const t = tool as { type?: unknown; id?: unknown; args?: unknown };
  if (t.type !== "provider" || typeof t.id !== "string" || !t.id.includes(".")) {
    throw new Error(`declareProviderTool: not an AI SDK provider tool (${String(t.id)})`);
  }
  return {
    type: "provider",
    id: t.id as LanguageModelV3ProviderTool["id"],
    name,
    args: (t.args ?? {}) as Record<string, unknown>,
  };
}
