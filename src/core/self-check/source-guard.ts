import { secretEncodings } from "../kernel/redact.js";
import { allStrings } from "./schemas.js";

/** What the Source Guard knows is not public: loopgate's own facts, never the model's. */
export interface SourceGuardContext {
  /** Known secret values (the environment's keys and tokens). */
  secrets: readonly string[];
  /** Held-out file paths (relative) and folders (absolute). */
  heldoutPaths: readonly string[];
  /** Distinctive tokens and lines of the held-out files. */
  heldoutContent: readonly string[];
  /** Folders outside the workspace that are loopgate's (run folder, task folder, store). */
  nonPublicPaths: readonly string[];
}

export type SourceGuardCategory =
  | "known_secret"
  | "secret_pattern"
  | "heldout_path"
  | "heldout_content"
  | "non_public_path";

export interface SourceGuardResult {
  status: "accepted" | "rejected";
  categories: SourceGuardCategory[];
  /** Names the categories only; never quotes the material. */
  publicReason: string;
}

export const SOURCE_GUARD_VERSION = 1;

/** gitleaks-style patterns of credentials. */
const SECRET_PATTERNS: readonly RegExp[] = [
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/,
  /\bgh[pousr]_[A-Za-z0-9]{36,}\b/,
  /\bgithub_pat_[A-Za-z0-9_]{22,}\b/,
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b/,
  /\bxox[baprs]-[A-Za-z0-9-]{10,}\b/,
  /\bAIza[0-9A-Za-z_-]{35}\b/,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/,
  /\b(?:api[_-]?key|secret|token|passw(?:or)?d)\b\s*[:=]\s*["']?[A-Za-z0-9_\-+/=]{16,}/i,
];

/** Paths that are never public task material. */
const NON_PUBLIC_PATTERNS: readonly RegExp[] = [
  /(?:^|\/)\.ssh\//,
  /(?:^|\/)\.aws\/credentials/,
  /(?:^|\/)\.netrc\b/,
  /(?:^|\/)\.env(?:\.[A-Za-z]+)?$/,
  /\/etc\/shadow\b/,
  /\/proc\/[^\s]*\/environ\b/,
  /\bid_(?:rsa|ed25519|ecdsa)\b/,
];

/** Checks every string of a plan or self-check submission before it is recorded. */
export function guardPublicStrings(value: unknown, ctx: SourceGuardContext): SourceGuardResult {
  const strings = allStrings(value);
  const found = new Set<SourceGuardCategory>();
  const secrets = ctx.secrets.filter((s) => s.length >= 6).flatMap(secretEncodings);
  const lowerSecrets = secrets.map((s) => s.toLowerCase());
  for (const s of strings) {
    const lower = s.toLowerCase();
    if (lowerSecrets.some((x) => lower.includes(x))) found.add("known_secret");
    if (SECRET_PATTERNS.some((p) => p.test(s))) found.add("secret_pattern");
    if (ctx.heldoutPaths.some((p) => p.length > 0 && s.includes(p))) found.add("heldout_path");
    if (ctx.heldoutContent.some((c) => c.length > 0 && s.includes(c))) found.add("heldout_content");
    if (
      ctx.nonPublicPaths.some((p) => p.length > 1 && s.includes(p)) ||
      NON_PUBLIC_PATTERNS.some((p) => p.test(s))
    )
      found.add("non_public_path");
  }
  const categories = [...found].sort();
  return categories.length === 0
    ? { status: "accepted", categories, publicReason: "only public task material" }
    : {
        status: "rejected",
        categories,
        publicReason: `rejected by the Source Guard: ${categories.join(", ")}; nothing was recorded`,
      };
}

/** Distinctive pieces of a held-out file: trimmed lines and tokens of at least 16 characters. */
export function heldoutFragments(content: string): string[] {
  const out = new Set<string>();
  for (const line of content.split("\n")) {
    const t = line.trim();
    if (t.length >= 16) out.add(t);
    for (const tok of t.split(/[\s"'`;,()[\]{}]+/)) if (tok.length >= 16) out.add(tok);
  }
  return [...out];
}
