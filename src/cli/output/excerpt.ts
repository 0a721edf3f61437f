/**
 * What could drive a terminal or reorder what it shows: C0 controls except tab and newline (so also
 * ESC and carriage return), DEL, the C1 controls (U+0080–U+009F, CSI among them) and the
 * Unicode bidirectional overrides and isolates; and lone surrogates, which a terminal cannot show
 * (the byte of a file name that is not UTF-8 is one: `caf\udce9.txt`, as in JSON).
 */
const CONTROL =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Makes text from outside (a builder, a gate log, a file name) inert on a terminal: each control
 * character is written out as an escape. C0 controls read `\x1b`; the others read `\u009b`, which is
 * also a JSON escape of the same character, so JSON output passed through here stays the same JSON
 * (JSON.stringify never leaves a C0 control raw). The CLI's stdout and stderr both go through it.
 */
export function escapeControl(s: string): string {
  return s.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x20
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** A name or a one-line field from outside (a path, a reason) as one inert line: newlines shown as `\n`. */
export function oneLine(s: string): string {
  return escapeControl(s.replace(/\n/g, "\\n"));
}

/** One line cut to `width` characters, the cut said. */
export function cutLine(s: string, width = 200): string {
  return s.length > width ? `${s.slice(0, width - 1)}…` : s;
}

/** Lines that say what failed in the usual test runners' output (TAP, node:test, pytest, shells). */
const FAILURE_LINE =
  /\bnot ok\b|\bFAIL(?:ED|URE)?\b|\bfailed\b|\bError\b|\berror:|\bassert|\bexpected\b|Traceback|No such file|not found|timed out/i;

/**
 * A few lines of a log for a human reading why a gate failed, escaped and cut: the lines that name a
 * failure when there are some (`not ok 3 - …`, `FAILED test_x`, `expected: …`), else the last lines.
 * The envelope keeps the whole bounded log; this is only what fits on a screen. `wholeLog` is the
 * command that shows it (with the run's real id).
 */
export function logTail(log: string, lines = 6, width = 200, wholeLog?: string): string[] {
  const all = log.split(/\r?\n/).filter((l) => l.trim() !== "");
  const failing = all.filter((l) => FAILURE_LINE.test(l));
  const picked = failing.length ? failing.slice(0, lines) : all.slice(-lines);
  const shown = picked.map((l) => cutLine(escapeControl(l.replace(/\r/g, "")), width));
  return all.length > shown.length
    ? [...shown, `… ${all.length} lines in all${wholeLog ? `; the whole log: ${wholeLog}` : ""}`]
    : shown;
}

/**
 * Splits a stream of chunks into whole lines, each written with `prefix` (`builder| `); the rest of
 * an unfinished line waits for the next chunk or `flush()`.
 */
export function lineStreamer(prefix: string, write: (line: string) => void, width = 500) {
  let pending = "";
  const emit = (l: string) => write(`${prefix}${cutLine(escapeControl(l.replace(/\r/g, "")), width)}`);
  return {
    push(chunk: string) {
      pending += chunk;
      const parts = pending.split("\n");
      pending = parts.pop() ?? "";
      for (const p of parts) emit(p);
      // A line with no newline in sight is still shown, in pieces, rather than held without bound.
      if (pending.length > width) {
        emit(pending);
        pending = "";
      }
    },
    flush() {
      if (pending) emit(pending);
      pending = "";
    },
  };
}
