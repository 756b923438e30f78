// Labels are kept twice: exactly as given (a `json` column) and as a `jsonb` copy that the
// `@>` containment filter and its GIN index work on. jsonb strings cannot hold U+0000, so the
// copy escapes it (and the escape character itself, keeping the mapping one-to-one); filters
// are escaped the same way, so matching is unchanged.
function escapeNul(text: string): string {
  return text.replaceAll("\\", "\\\\").replaceAll("\u0000", "\\0");
}

/** The `label_index` value for `labels`, as JSON text. */
export function labelIndex(labels: Record<string, string>): string {
  const escaped: Record<string, string> = {};
  for (const [key, value] of Object.entries(labels))
    escaped[escapeNul(key)] = escapeNul(String(value));
  return JSON.stringify(escaped);
}
