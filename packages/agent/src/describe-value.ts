// Names a value the way an error message should ("a BigInt", "a Date", "an instance of
// Foo") so a person can find it in their code without printing it.

export function withArticle(noun: string): string {
  // "a Uint8Array", "a URIError": a leading U there sounds like "you".
  return /^[aeiouAEIOU]/.test(noun) && !/^U(int|RI|RL)/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  switch (typeof value) {
    case "string":
      return "a string";
    case "boolean":
      return "a boolean";
    case "number":
      if (Number.isNaN(value)) return "NaN";
      if (value === Number.POSITIVE_INFINITY) return "Infinity";
      if (value === Number.NEGATIVE_INFINITY) return "-Infinity";
      return "a number";
    case "bigint":
      return "a BigInt";
    case "symbol":
      return "a symbol";
    case "function":
      return "a function";
  }
  if (Array.isArray(value)) return "an array";
  return describeObject(value as object);
}

export function describeObject(value: object): string {
  // The tag tells built-ins apart even across realms; class instances all report "Object".
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  if (tag === "String" || tag === "Number" || tag === "Boolean") return `a boxed ${tag}`;
  if (tag !== "Object") return withArticle(tag);
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === null || proto === Object.prototype) return "an object";
  const ctor = (proto as { constructor?: unknown }).constructor;
  if (typeof ctor === "function" && ctor.name) return `an instance of ${ctor.name}`;
  return "an object with a custom prototype";
}
