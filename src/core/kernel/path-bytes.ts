import { isUtf8 } from "node:buffer";

/**
 * File names are bytes; loopgate's paths are strings. This is the one encoding between them, used
 * wherever a path from a file system becomes a string (observations, change plans, events, the
 * envelope) and back wherever such a string reaches a file system call.
 *
 * A name that is valid UTF-8 is its decoded text, unchanged: every path recorded before this encoding
 * existed reads as it did. Each byte of a name that is not part of a valid UTF-8 sequence becomes one
 * lone low surrogate, U+DC80 + (byte − 0x80), U+DC80..U+DCFF (bytes below 0x80 are always valid). No
 * valid UTF-8 decodes to a lone surrogate, so the encoding is one-to-one and lossless. JSON writes such
 * a character as the escape `\udce9` (plain ASCII), which is how an encoded path appears in the event
 * log, the envelope and on a terminal: `caf\udce9.txt` is the Latin-1 name `caf` 0xE9 `.txt`.
 */

/** A lone low surrogate of the escape range: one that no high surrogate precedes. */
const ESCAPE = /(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/;
const ANY_SURROGATE = /[\uD800-\uDFFF]/;
/** A surrogate that is neither half of a pair nor an escape: never produced by encodePathBytes. */
const STRAY = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])(?:[\uDC00-\uDC7F]|[\uDD00-\uDFFF])/;

/** The string of a raw name or path: its UTF-8 text, each byte of an invalid sequence as U+DC80 + (byte − 0x80). */
export function encodePathBytes(raw: Uint8Array): string {
  const buf = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (isUtf8(buf)) return buf.toString("utf8");
  let out = "";
  let from = 0;
  let i = 0;
  while (i < buf.length) {
    const b = buf[i] as number;
    if (b < 0x80) {
      i++;
      continue;
    }
    const len = sequenceLength(buf, i);
    if (len > 0) {
      i += len;
      continue;
    }
    out += buf.toString("utf8", from, i) + String.fromCharCode(0xdc00 + b);
    i++;
    from = i;
  }
  return out + buf.toString("utf8", from);
}

/**
 * The length of the valid UTF-8 sequence that starts at `i` (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 when the byte there starts none.
 */
function sequenceLength(b: Uint8Array, i: number): number {
  const x = b[i] as number;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => {
    const y = b[i + k];
    return y !== undefined && y >= lo && y <= hi;
  };
  if (x >= 0xc2 && x <= 0xdf) return cont(1) ? 2 : 0;
  if (x >= 0xe0 && x <= 0xef) {
    const lo = x === 0xe0 ? 0xa0 : 0x80;
    const hi = x === 0xed ? 0x9f : 0xbf;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (x >= 0xf0 && x <= 0xf4) {
    const lo = x === 0xf0 ? 0x90 : 0x80;
    const hi = x === 0xf4 ? 0x8f : 0xbf;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** True when `s` is something encodePathBytes can produce: every lone surrogate is an escape (U+DC80..U+DCFF). */
export function isEncodedPath(s: string): boolean {
  return !STRAY.test(s);
}

/** True when `s` holds an escaped byte, so its bytes are not its UTF-8 text. */
export function hasRawBytes(s: string): boolean {
  return ANY_SURROGATE.test(s) && ESCAPE.test(s);
}

/** The raw bytes of an encoded path; throws on a string encodePathBytes never produces (see isEncodedPath). */
export function decodePathBytes(s: string): Buffer {
  if (!ANY_SURROGATE.test(s)) return Buffer.from(s, "utf8");
  if (!isEncodedPath(s)) throw new Error(`not an encoded path: ${JSON.stringify(s)}`);
  const parts: Buffer[] = [];
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      i++; // the high half of a pair (isEncodedPath checked that its low half follows)
      continue;
    }
    if (c < 0xdc80 || c > 0xdcff) continue;
    parts.push(Buffer.from(s.slice(from, i), "utf8"), Buffer.of(c - 0xdc00));
    from = i + 1;
  }
  parts.push(Buffer.from(s.slice(from), "utf8"));
  return Buffer.concat(parts);
}

/**
 * What to hand a file system call for an encoded path: the string itself when it is plain UTF-8
 * text (the common case, and what Node would encode it to anyway), else its raw bytes as a Buffer.
 */
export function fsPath(s: string): string | Buffer {
  return hasRawBytes(s) ? decodePathBytes(s) : s;
}

/** The length in bytes of the path an encoded string stands for. */
export function pathByteLength(s: string): number {
  return hasRawBytes(s) ? decodePathBytes(s).length : Buffer.byteLength(s);
}

const SLASH = Buffer.from("/");

/**
 * `parent/name` for a file system call, `name` being `encodePathBytes(raw)`: a string while every
 * part is UTF-8 text, else the raw bytes.
 */
export function childPath(parent: string | Buffer, raw: Buffer, name: string): string | Buffer {
  if (typeof parent === "string" && !hasRawBytes(name)) return `${parent}/${name}`;
  return Buffer.concat([typeof parent === "string" ? Buffer.from(parent) : parent, SLASH, raw]);
}

/** A path given to a file system call, as text for a message (encoded like every path). */
export function pathText(p: string | Buffer): string {
  return typeof p === "string" ? p : encodePathBytes(p);
}
