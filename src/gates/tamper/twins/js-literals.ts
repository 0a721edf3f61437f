/**
 * JavaScript literals as mutation sites: which expressions count as a literal expected value, and how a
 * replacement is written so that it looks like the original (same quotes, escapes, radix, exponent).
 */
import type { Expression, Node } from "@babel/types";
import { babelParser } from "./babel-parser.js";
import {
  booleanReplacement,
  decimalReplacements,
  integerReplacements,
  stringReplacements,
} from "./mutate.js";

/** The kinds of literal a site can hold; a replacement must be of the same kind. */
export type LiteralKind = "string" | "template" | "number" | "bigint" | "boolean";

/** A literal's kind, or null when the expression is not one a twin can change. */
export function literalKind(node: Node): LiteralKind | null {
  switch (node.type) {
    case "StringLiteral":
      return "string";
    case "TemplateLiteral":
      return node.expressions.length === 0 && node.quasis[0]?.value.cooked != null ? "template" : null;
    case "NumericLiteral":
      return "number";
    case "BigIntLiteral":
      return "bigint";
    case "BooleanLiteral":
      return "boolean";
    case "UnaryExpression":
      return node.operator === "-" &&
        (node.argument.type === "NumericLiteral" || node.argument.type === "BigIntLiteral")
        ? literalKind(node.argument)
        : null;
    default:
      return null;
  }
}

/**
 * The literals inside an expected value, in source order: the value itself, or the elements and property
 * values of array and object literals (recursively). Type assertions around them are looked through.
 */
export function literalsIn(node: Node): Node[] {
  if (literalKind(node) !== null) return [node];
  switch (node.type) {
    case "ArrayExpression":
      return node.elements.flatMap((e) => (e && e.type !== "SpreadElement" ? literalsIn(e) : []));
    case "ObjectExpression":
      return node.properties.flatMap((p) => (p.type === "ObjectProperty" ? literalsIn(p.value) : []));
    case "TSAsExpression":
    case "TSSatisfiesExpression":
    case "TSNonNullExpression":
    case "TSTypeAssertion":
    case "ParenthesizedExpression":
      return literalsIn(node.expression);
    default:
      return [];
  }
}

/** `\uXXXX` for one UTF-16 unit. */
function unicodeEscape(unit: number): string {
  return `\\u${unit.toString(16).toUpperCase().padStart(4, "0")}`;
}

const SHORT_ESCAPES: Record<string, string> = {
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\b": "\\b",
  "\f": "\\f",
};

/**
 * `value` written as a string literal in the style of `raw` (an existing literal): the same quote
 * character, and non-ASCII characters escaped when the original wrote none of its own literally.
 */
export function quoteLike(raw: string, value: string): string {
  const quote = raw[0] === "'" || raw[0] === "`" ? raw[0] : '"';
  // An original that escaped its non-ASCII characters and wrote none of them literally stays ASCII.
  const escapeNonAscii = !/[^\x20-\x7e]/.test(raw) && /\\u/.test(raw);
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string;
    const unit = value.charCodeAt(i);
    if (c === "\\" || c === quote) out += `\\${c}`;
    else if (quote === "`" && c === "$" && value[i + 1] === "{") out += "\\$";
    else if (SHORT_ESCAPES[c] !== undefined) out += SHORT_ESCAPES[c];
    else if (unit < 0x20 || unit === 0x7f || unit === 0x2028 || unit === 0x2029) out += unicodeEscape(unit);
    else if (unit > 0x7e && escapeNonAscii) out += unicodeEscape(unit);
    else out += c;
  }
  return `${quote}${out}${quote}`;
}

// Integers written in another radix keep it: prefix, letter case and width as written.
const RADIX = /^0([xXoObB])([0-9a-fA-F]+)$/;
const RADIX_BASE: Record<string, number> = { x: 16, o: 8, b: 2 };

/** Replacement texts for a numeric body (`raw` without sign) of the given sign; null when not handled. */
function numberReplacements(negative: boolean, raw: string, suffix: string): string[] | null {
  // Numeric separators and legacy octal (`017`) are rare; without a faithful way to rewrite them, no site.
  if (raw.includes("_") || /^0\d/.test(raw)) return null;
  const radix = RADIX.exec(raw);
  if (radix) {
    const [, letter = "x", digits = ""] = radix;
    const base = RADIX_BASE[letter.toLowerCase()] ?? 16;
    const upper = digits !== digits.toLowerCase();
    const value = BigInt(raw) * (negative ? -1n : 1n);
    return integerReplacements(value).map((v) => {
      const text = (v < 0n ? -v : v).toString(base).padStart(digits.length, "0");
      return `${v < 0n ? "-" : ""}0${letter}${upper ? text.toUpperCase() : text}${suffix}`;
    });
  }
  const out = decimalReplacements(`${negative ? "-" : ""}${raw}`);
  return out?.map((t) => `${t}${suffix}`) ?? null;
}

/** Replacement source texts for a literal node (see literalKind), or [] when it has none of its shape. */
export function replacementsFor(node: Node, source: string): string[] {
  const raw = source.slice(node.start ?? 0, node.end ?? 0);
  switch (node.type) {
    case "StringLiteral":
      return stringReplacements(node.value).map((v) => quoteLike(raw, v));
    case "TemplateLiteral": {
      const cooked = node.quasis[0]?.value.cooked;
      return cooked == null ? [] : stringReplacements(cooked).map((v) => quoteLike(raw, v));
    }
    case "BooleanLiteral":
      return [String(booleanReplacement(node.value))];
    case "NumericLiteral":
      return numberReplacements(false, raw, "") ?? [];
    case "BigIntLiteral":
      return numberReplacements(false, raw.slice(0, -1), "n") ?? [];
    case "UnaryExpression": {
      const arg = node.argument;
      const argRaw = source.slice(arg.start ?? 0, arg.end ?? 0);
      if (arg.type === "NumericLiteral") return numberReplacements(true, argRaw, "") ?? [];
      if (arg.type === "BigIntLiteral") return numberReplacements(true, argRaw.slice(0, -1), "n") ?? [];
      return [];
    }
    default:
      return [];
  }
}

/** The kind of literal a replacement text is (parsed, never evaluated), or null when it is anything else. */
export function replacementKind(text: string): LiteralKind | null {
  let expr: Expression;
  try {
    expr = babelParser().parseExpression(text, { errorRecovery: false });
  } catch {
    return null;
  }
  // Exactly one literal and nothing around it (no trailing comment or second expression).
  if (expr.start !== 0 || expr.end !== text.length) return null;
  return literalKind(expr);
}
