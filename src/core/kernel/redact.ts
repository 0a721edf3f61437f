/** A secret value and the encodings it could travel in. */
export function secretEncodings(secret: string): string[] {
  const b = Buffer.from(secret, "utf8");
  const base64 = b.toString("base64");
  return [
    secret,
    base64,
    base64.replace(/=+$/, ""),
    b.toString("base64url"),
    b.toString("hex"),
    encodeURIComponent(secret),
    [...secret].reverse().join(""),
  ].filter((v, i, all) => v.length >= 6 && all.indexOf(v) === i);
}

/** A secret loopgate knows by name: a `--builder-env` variable or a provider key it holds. */
export interface NamedSecret {
  name: string;
  value: string;
}

/**
 * Values shorter than this are never redacted: a 4-character value ("true", "1234", a port) occurs
 * by chance all over a log, and replacing it everywhere would destroy the record without protecting
 * anything a real credential needs.
 */
export const MIN_REDACTED_LENGTH = 8;

/** Provider keys loopgate reads itself (models, judge); always redacted when set, `--builder-env` or not. */
export const PROVIDER_KEY_NAMES: readonly string[] = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "OPENAI_API_KEY",
  "OPENAI_COMPATIBLE_API_KEY",
  "GOOGLE_GENERATIVE_AI_API_KEY",
  "GEMINI_API_KEY",
  "MISTRAL_API_KEY",
  "GROQ_API_KEY",
  "OPENROUTER_API_KEY",
];

/** The secrets of a run: the named variables that are set in `env` and long enough to redact. */
export function runSecrets(env: Readonly<Record<string, string | undefined>>, builderEnv: readonly string[]) {
  const names = [...new Set([...builderEnv, ...PROVIDER_KEY_NAMES])];
  const out: NamedSecret[] = [];
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value.length >= MIN_REDACTED_LENGTH) out.push({ name, value });
  }
  return out;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** What cuts a redacted string back to its original length (a marker can be longer than the value). */
const CUT = " …[cut: redaction lengthened this text]… ";

/**
 * A function that replaces every occurrence of each secret, and of its encodings the Source Guard
 * knows (base64 with and without padding, base64url, hex in either case, URL encoding, reversed), by
 * `[redacted:NAME]`. A result is never longer than its input, so redaction cannot push a string
 * past an event schema's limit; when the markers would make it longer, its middle is cut.
 */
export function secretRedactor(secrets: readonly NamedSecret[]): (s: string) => string {
  const marker = new Map<string, string>();
  for (const { name, value } of secrets) {
    if (value.length < MIN_REDACTED_LENGTH) continue;
    // Hex in either case: a builder may print it upper-cased; base64 and the value are case-sensitive.
    const hex = Buffer.from(value, "utf8").toString("hex").toUpperCase();
    for (const v of [...secretEncodings(value), hex]) if (!marker.has(v)) marker.set(v, `[redacted:${name}]`);
  }
  if (marker.size === 0) return (s) => s;
  // Longest first, so a padded base64 wins over its unpadded prefix.
  const keys = [...marker.keys()].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(keys.map(escapeRegExp).join("|"), "g");
  return (s) => {
    if (s.length < MIN_REDACTED_LENGTH) return s;
    const out = s.replace(pattern, (m) => marker.get(m) ?? "[redacted]");
    if (out.length <= s.length) return out;
    if (s.length <= CUT.length + 2) return out.slice(0, s.length);
    const head = Math.floor((s.length - CUT.length) / 2);
    return `${out.slice(0, head)}${CUT}${out.slice(out.length - (s.length - CUT.length - head))}`;
  };
}

/** Applies `redact` to every string inside `value` (object keys included), returning a new value. */
export function redactDeep<T>(value: T, redact: (s: string) => string): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redact(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[redact(k)] = walk(x);
      return out;
    }
    return v;
  };
  return walk(value) as T;
}
