// Renders a list of path segments the way a person would write them in JavaScript, so an
// error such as `$.items[3]["unit price"]` can be pasted straight into a debugger.

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export type PathSegment = string | number;

export function formatPath(root: string, segments: readonly PathSegment[]): string {
  let out = root;
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}
