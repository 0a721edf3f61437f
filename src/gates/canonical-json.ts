/** One JSON document as a canonical text (equal values, equal texts), or why it is not valid JSON. */
export type CanonicalJson = { ok: true; text: string } | { ok: false; why: string };

/**
 * A value as read: a scalar as its canonical text, an array, or an object (last duplicate key wins).
 * The tree is rendered once at the end, never level by level, so nesting costs linear time.
 */
type Value = string | { array: Value[] } | { object: Map<string, Value> };

/** An open array or object while reading, and for an object the key of the member being read. */
type Frame = { array: Value[] } | { object: Map<string, Value>; key: string };

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const LITERALS = ["true", "false", "null"] as const;
const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/** Thrown inside the reader only; carries the offset the message is about. */
class JsonSyntax extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}

/**
 * Reads one JSON document (RFC 8259) and renders it canonically, so two documents are equal by value
 * exactly when their texts are equal. Object keys are sorted (code-unit order) and, as with JSON.parse,
 * the last of duplicate keys wins; spacing goes. Numbers keep their source text until rendered:
 * - an integer (no fraction, no exponent) is compared exactly, at any size: 9007199254740993 differs from
 *   9007199254740992 (JSON.parse would round both to the same double); `-0` is `0`;
 * - any other number is read as its IEEE-754 double: `0.1` equals `0.10`, `1e-400` equals `0`. When that
 *   double is integral it is that integer, at any magnitude, so `100.0` and `1e2` equal `100`, and
 *   `9007199254740993.0` (whose double is 9007199254740992) equals `9007199254740992`;
 * - a number with a fraction or exponent beyond the double range (`1e400`) cannot be compared faithfully,
 *   so the document is refused rather than read as infinity.
 * Invalid JSON gives why, with its line and column. The reader is iterative: nesting depth costs no stack.
 */
export function canonicalJson(text: string): CanonicalJson {
  try {
    return { ok: true, text: render(read(text)) };
  } catch (e) {
    if (!(e instanceof JsonSyntax)) throw e;
    return { ok: false, why: `${e.message} at ${where(text, e.at)}` };
  }
}

/** Reads one whole document into a Value; throws JsonSyntax at the first thing that is not JSON. */
function read(text: string): Value {
  const stack: Frame[] = [];
  let i = 0;
  const skip = () => {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
      i++;
    }
  };
  const key = (): string => {
    skip();
    if (text[i] !== '"') throw unexpected(text, i, "a string key");
    const k = readString(text, i);
    i = k.end;
    skip();
    if (text[i] !== ":") throw unexpected(text, i, '":"');
    i++;
    return k.value;
  };
  for (;;) {
    // Expecting a value: an empty container closes at once, an open one becomes a frame.
    skip();
    let done: Value;
    const c = text[i];
    if (c === "[" || c === "{") {
      i++;
      skip();
      const close = c === "[" ? "]" : "}";
      if (text[i] === close) {
        i++;
        done = c === "[" ? { array: [] } : { object: new Map() };
      } else {
        stack.push(c === "[" ? { array: [] } : { object: new Map(), key: key() });
        continue;
      }
    } else if (c === '"') {
      const s = readString(text, i);
      i = s.end;
      done = JSON.stringify(s.value);
    } else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m) throw unexpected(text, i, "a number");
      done = numberText(m[0], i);
      i += m[0].length;
    } else {
      const word = LITERALS.find((w) => text.startsWith(w, i));
      if (!word) throw unexpected(text, i, "a value");
      i += word.length;
      done = word;
    }
    // A value is complete: it closes every container it finishes, then the reader expects the next one.
    for (;;) {
      const top = stack.at(-1);
      skip();
      if (!top) {
        if (i < text.length) throw unexpected(text, i, "the end after the JSON value");
        return done;
      }
      if ("array" in top) top.array.push(done);
      else top.object.set(top.key, done);
      const sep = text[i];
      if (sep === ",") {
        i++;
        if ("object" in top) top.key = key();
        break;
      }
      const close = "array" in top ? "]" : "}";
      if (sep !== close) throw unexpected(text, i, `"," or "${close}"`);
      i++;
      stack.pop();
      done = "array" in top ? { array: top.array } : { object: top.object };
    }
  }
}

/**
 * The canonical text of a value read: no spacing, object members sorted by key in code-unit order (the
 * order `<` uses). Iterative, with an explicit list of what is still to write, so depth costs no stack.
 */
function render(root: Value): string {
  const out: string[] = [];
  const todo: Value[] = [root];
  for (let v = todo.pop(); v !== undefined; v = todo.pop()) {
    // A string on the list is written as is: a scalar's canonical text or punctuation.
    if (typeof v === "string") out.push(v);
    else if ("array" in v) {
      todo.push("]");
      for (let j = v.array.length - 1; j >= 0; j--) todo.push(v.array[j] as Value, j ? "," : "");
      out.push("[");
    } else {
      const keys = [...v.object.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      todo.push("}");
      for (let j = keys.length - 1; j >= 0; j--) {
        const k = keys[j] as string;
        todo.push(v.object.get(k) as Value, `${j ? "," : ""}${JSON.stringify(k)}:`);
      }
      out.push("{");
    }
  }
  return out.join("");
}

/**
 * A number's canonical text, per canonicalJson's rule. An integer's source text already is its one
 * decimal spelling (JSON forbids leading zeros and a `+`), except `-0`; an integral double is spelled
 * exactly through BigInt, so it meets the integers; a non-integral double's String() always holds a `.`
 * or an `e`, so it never meets one.
 */
function numberText(token: string, at: number): string {
  if (!/[.eE]/.test(token)) return token === "-0" ? "0" : token;
  const d = Number(token);
  if (!Number.isFinite(d)) throw new JsonSyntax(`number ${clip(token)} is beyond the double range`, at);
  return Number.isInteger(d) ? BigInt(d).toString() : String(d);
}

/** Reads the string starting at the quote at `start`: its value (as JSON.parse gives it) and where it ends. */
function readString(text: string, start: number): { value: string; end: number } {
  let i = start + 1;
  let value = "";
  let run = i;
  for (;;) {
    if (i >= text.length) throw new JsonSyntax("unterminated string", start);
    const c = text.charCodeAt(i);
    if (c === 0x22) return { value: value + text.slice(run, i), end: i + 1 };
    if (c < 0x20) throw new JsonSyntax("control character in a string", i);
    if (c !== 0x5c) {
      i++;
      continue;
    }
    value += text.slice(run, i);
    const e = text[i + 1];
    if (e === "u") {
      const hex = text.slice(i + 2, i + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonSyntax("bad \\u escape", i);
      // Surrogates are kept as code units, paired or not, as JSON.parse keeps them.
      value += String.fromCharCode(Number.parseInt(hex, 16));
      i += 6;
    } else if (e !== undefined && Object.hasOwn(ESCAPES, e)) {
      value += ESCAPES[e];
      i += 2;
    } else throw new JsonSyntax("bad escape", i);
    run = i;
  }
}

/** The error for `at`: what the reader wanted there, and what it found (a character, or the end). */
function unexpected(text: string, at: number, wanted: string): JsonSyntax {
  const got =
    at >= text.length ? "end of input" : JSON.stringify(String.fromCodePoint(text.codePointAt(at) ?? 0));
  return new JsonSyntax(`expected ${wanted}, found ${got}`, at);
}

/** A 1-based line and column, and the 0-based character offset, of `at`. */
function where(text: string, at: number): string {
  let line = 1;
  let lineStart = 0;
  for (let j = text.indexOf("\n"); j !== -1 && j < at; j = text.indexOf("\n", j + 1)) {
    line++;
    lineStart = j + 1;
  }
  return `line ${line} column ${at - lineStart + 1} (character ${at})`;
}

const clip = (s: string) => (s.length > 40 ? `${s.slice(0, 40)}…` : s);
