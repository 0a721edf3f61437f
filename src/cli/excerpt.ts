/** C0 controls except tab and newline, DEL, and the C1 CSI: what could move a terminal's cursor. */
const isControl = (code: number) =>
  (code < 0x20 && code !== 0x09 && code !== 0x0a) || code === 0x7f || code === 0x9b;

/** Makes text from outside (a builder, a gate log) safe for one terminal line: control characters escaped. */
export function escapeControl(s: string): string {
  let out = "";
  for (const c of s) {
    const code = c.charCodeAt(0);
    out += isControl(code) ? `\\x${code.toString(16).padStart(2, "0")}` : c;
  }
  return out;
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
 * The envelope keeps the whole bounded log; this is only what fits on a screen.
 */
export function logTail(log: string, lines = 6, width = 200): string[] {
  const all = log.split(/\r?\n/).filter((l) => l.trim() !== "");
  const failing = all.filter((l) => FAILURE_LINE.test(l));
  const picked = failing.length ? failing.slice(0, lines) : all.slice(-lines);
  const shown = picked.map((l) => cutLine(escapeControl(l.replace(/\r/g, "")), width));
  return all.length > shown.length
    ? [...shown, `… ${all.length} lines in all; the whole log: loopgate status RUN --json`]
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
