// An origin that echoes a request back (a debugging endpoint, an error page quoting the
// Authorization header) would hand the secret to agent code, which must never see it. The
// gateway replaces every occurrence of the request's secret values in the response's status
// text, headers and body with a fixed marker before relaying them, body included while it
// streams: the last bytes of each chunk that could begin a value are held back until the next
// chunk decides, so a value split across chunks is caught too.
//
// Forms covered, for each value: as sent (which also covers `Bearer <value>` and any declared
// prefix or suffix around it), percent-encoded (upper- and lower-case hex, and `+` for spaces),
// JSON-escaped (also with `\/`), and base64 / base64url at each of the three byte alignments
// the value can have inside a longer encoded text (e.g. a Basic credential or an echoed JSON
// document in base64). Not covered: other encodings (hex, double encoding, compression the
// gateway does not undo) and transformations (case changes, truncation).

import { Transform, type TransformCallback } from "node:stream";

export const SECRET_MARKER = "[secret]";
const MARKER = Buffer.from(SECRET_MARKER, "utf8");
/** Encoded forms shorter than this would match innocent text too often to be worth replacing. */
const MIN_ENCODED_LENGTH = 8;

/** The byte strings that reveal one of `values`, longest first. */
export function echoForms(values: readonly string[]): Buffer[] {
  const forms = new Set<string>();
  for (const value of values) {
    if (!value) continue;
    const encoded = new Set<string>();
    const percent = encodeURIComponent(value);
    encoded.add(percent);
    encoded.add(percent.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()));
    encoded.add(percent.replace(/%20/g, "+"));
    const json = JSON.stringify(value).slice(1, -1);
    encoded.add(json);
    encoded.add(json.replace(/\//g, "\\/"));
    for (const core of base64Cores(Buffer.from(value, "utf8"))) encoded.add(core);
    forms.add(value);
    for (const form of encoded) if (form.length >= MIN_ENCODED_LENGTH) forms.add(form);
  }
  return [...forms].map((form) => Buffer.from(form, "utf8")).sort((a, b) => b.length - a.length);
}

/**
 * The part of the base64 text of `bytes` that does not depend on its neighbours, for each of
 * the three offsets it can start at within a longer encoded text; standard and URL alphabets.
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (const shift of [0, 1, 2]) {
    const text = Buffer.concat([Buffer.alloc(shift), bytes])
      .toString("base64")
      .replace(/=+$/, "");
    const total = shift + bytes.length;
    // Characters mixing pad bits in front, or the unknown next byte behind, are left out.
    const start = [0, 2, 3][shift]!;
    const end = Math.floor(total / 3) * 4 + [0, 1, 2][total % 3]!;
    const core = text.slice(start, end);
    cores.push(core, core.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return cores;
}

/** Replaces every form in `text` (a header value or status text, as bytes in latin1). */
export function redactText(text: string, forms: readonly Buffer[]): string {
  if (forms.length === 0) return text;
  const out = new Redaction(forms).push(Buffer.from(text, "latin1"), true);
  return out.toString("latin1");
}

/** A stream that passes bytes through with every form replaced by the marker. */
export function redactingStream(forms: readonly Buffer[]): Transform {
  const redaction = new Redaction(forms);
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      const out = redaction.push(chunk, false);
      done(null, out.length > 0 ? out : undefined);
    },
    flush(done: TransformCallback) {
      const out = redaction.push(Buffer.alloc(0), true);
      done(null, out.length > 0 ? out : undefined);
    },
  });
}

class Redaction {
  /** Bytes held back from the previous chunk: they may be the start of a form. */
  private held: Buffer = Buffer.alloc(0);
  private readonly longest: number;

  constructor(private readonly forms: readonly Buffer[]) {
    this.longest = forms.reduce((max, form) => Math.max(max, form.length), 0);
  }

  push(chunk: Buffer, final: boolean): Buffer {
    const buffer = this.held.length > 0 ? Buffer.concat([this.held, chunk]) : chunk;
    const out: Buffer[] = [];
    let position = 0;
    // A match starting before `settled` lies wholly within `buffer`; later ones may not yet.
    const settled = final ? buffer.length : buffer.length - this.longest + 1;
    for (;;) {
      const match = this.next(buffer, position);
      if (!match || match.start >= settled) break;
      out.push(buffer.subarray(position, match.start), MARKER);
      position = match.end;
    }
    const keepFrom = final ? buffer.length : this.heldFrom(buffer, Math.max(position, settled));
    out.push(buffer.subarray(position, keepFrom));
    this.held = Buffer.from(buffer.subarray(keepFrom));
    return Buffer.concat(out);
  }

  /** The leftmost occurrence of any form from `from`; the longest form wins a tie. */
  private next(buffer: Buffer, from: number): { start: number; end: number } | undefined {
    let best: { start: number; end: number } | undefined;
    for (const form of this.forms) {
      const start = buffer.indexOf(form, from);
      if (start !== -1 && (!best || start < best.start)) best = { start, end: start + form.length };
    }
    return best;
  }

  /**
   * Where the tail that may still hold a form starts: the first position where the bytes begin
   * a form or hold one whole (a longer form may begin there too and end in the next chunk).
   */
  private heldFrom(buffer: Buffer, from: number): number {
    for (let at = from; at < buffer.length; at++) {
      const rest = buffer.length - at;
      for (const form of this.forms) {
        const n = Math.min(form.length, rest);
        if (buffer.compare(form, 0, n, at, at + n) === 0) return at;
      }
    }
    return buffer.length;
  }
}
