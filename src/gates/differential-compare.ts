import type { CompareMode } from "../core/task/differential-spec.js";
import { canonicalJson } from "./canonical-json.js";

/** A normalised output: text to compare (and show), or why it cannot be normalised (not JSON). */
export type Normalised = { ok: true; text: string } | { ok: false; why: string };

/**
 * Applies a declared normaliser. `exact` keeps the bytes (as latin1, one character per byte, so no two
 * different byte strings compare equal); the others read UTF-8 text.
 * - trim_trailing_whitespace: spaces, tabs and CRs at the end of each line, and blank lines at the end, go.
 * - sorted_lines: the lines in code-point order (a final newline does not make an empty line).
 * - json: one UTF-8 JSON document, compared by value (key order and spacing do not matter; integers
 *   exactly at any size, other numbers as doubles: see canonicalJson).
 */
export function normalise(bytes: Buffer, mode: CompareMode): Normalised {
  if (mode === "exact") return { ok: true, text: bytes.toString("latin1") };
  if (mode === "json") return jsonText(bytes);
  const text = bytes.toString("utf8");
  switch (mode) {
    case "trim_trailing_whitespace":
      return {
        ok: true,
        text: text
          .split("\n")
          .map((l) => l.replace(/[ \t\r]+$/, ""))
          .join("\n")
          .replace(/\n+$/, ""),
      };
    case "sorted_lines": {
      const lines = text.split("\n");
      if (lines.at(-1) === "") lines.pop();
      return { ok: true, text: lines.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join("\n") };
    }
  }
}

/**
 * The json normaliser. The bytes must be valid UTF-8: decoding with replacement would turn two
 * different invalid sequences into the same U+FFFD and let them compare equal.
 */
function jsonText(bytes: Buffer): Normalised {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return { ok: false, why: "not valid JSON (not valid UTF-8)" };
  }
  const r = canonicalJson(text);
  return r.ok ? r : { ok: false, why: `not valid JSON (${r.why})` };
}

/** True when two outputs are the same under `mode`; an output that cannot be normalised equals nothing. */
export function sameOutput(a: Buffer, b: Buffer, mode: CompareMode): boolean {
  const x = normalise(a, mode);
  const y = normalise(b, mode);
  if (!x.ok || !y.ok) return false;
  return x.text === y.text;
}

/**
 * A bounded, escaped rendering of an output for the gate log: JSON string syntax (so CRs, tabs and control
 * characters are visible), head kept, the cut said.
 */
export function showOutput(bytes: Buffer, limit = 300): string {
  const text = bytes.toString("utf8");
  const shown = JSON.stringify(text.length > limit ? text.slice(0, limit) : text);
  return text.length > limit ? `${shown} […${text.length - limit} more characters]` : shown;
}
