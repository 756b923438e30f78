// The platform's docs write Anthropic models the OpenRouter way, with a dot in the version
// (`anthropic/claude-sonnet-4.6`); Anthropic's own API spells the same model with a hyphen
// (`claude-sonnet-4-6`) and refuses the dotted form. Translating here lets every docs sample's
// useModel run on a direct Anthropic key unchanged; a native id passes through as written.

/** `claude-sonnet-4.6` → `claude-sonnet-4-6`; any other name unchanged. */
export function anthropicModelName(name: string): string {
  if (!name.startsWith("claude-")) return name;
  return name.replace(/(\d)\.(\d)/g, "$1-$2");
}
