// A text[] parameter in PostgreSQL's binary array format (what array_send writes and array_recv
// reads), sent as a Buffer, which node-postgres passes in binary. The text format would have
// every element quoted and every `"` and `\` in it escaped here, then unescaped by the server:
// event data is JSON, full of quotes. Binary elements are length-prefixed bytes, copied as they
// are. Only for parameters PostgreSQL types as text[] (oc_write's): binary input is read as the
// parameter's type.

/** PostgreSQL's type OID of `text`. */
const TEXT_OID = 25;

/** `values` as a one-dimensional text[] (lower bound 1); null and undefined are SQL NULL. */
export function textArray(values: readonly (string | null | undefined)[]): Buffer {
  const n = values.length;
  const lengths = new Int32Array(n);
  // ndim, has-nulls flag, element type; then one dimension's length and lower bound.
  let size = n === 0 ? 12 : 20;
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const value = values[i];
    if (value === null || value === undefined) {
      lengths[i] = -1;
      nulls = 1;
      size += 4;
    } else {
      const length = Buffer.byteLength(value, "utf8");
      lengths[i] = length;
      size += 4 + length;
    }
  }
  const out = Buffer.allocUnsafe(size);
  out.writeInt32BE(n === 0 ? 0 : 1, 0);
  out.writeInt32BE(nulls, 4);
  out.writeInt32BE(TEXT_OID, 8);
  let at = 12;
  if (n > 0) {
    out.writeInt32BE(n, 12);
    out.writeInt32BE(1, 16);
    at = 20;
  }
  for (let i = 0; i < n; i++) {
    const length = lengths[i]!;
    out.writeInt32BE(length, at);
    at += 4;
    if (length > 0) at += out.write(values[i]!, at, length, "utf8");
  }
  return out;
}
