import type { Envelope } from "../core/envelope.js";
import type { RunReporter } from "../runner/reporter.js";

const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** A run reporter that owns a timer: `close()` stops it, whatever state the run ended in. */
export interface ProgressReporter extends RunReporter {
  close(): void;
}

/**
 * Renders run progress on a stream: on a terminal a live line per running step (attempt n/N, the gate
 * being run with its elapsed time), elsewhere one plain line per finished step. At most one live line
 * (and one timer) exists at a time: starting one ends the previous one, and the timer never keeps the
 * process alive on its own.
 */
export function progressReporter(
  out: Pick<NodeJS.WriteStream, "write" | "isTTY">,
  options: { tty?: boolean; indent?: string } = {},
): ProgressReporter {
  const tty = options.tty ?? Boolean(out.isTTY);
  const pad = options.indent ?? "";
  let live: { label: string; started: number; timer: NodeJS.Timeout } | null = null;
  const endLive = () => {
    if (!live) return;
    clearInterval(live.timer);
    out.write("\r\x1b[2K");
    live = null;
  };
  const startLive = (label: string) => {
    if (!tty) return;
    endLive();
    const started = Date.now();
    const draw = () => out.write(`\r\x1b[2K${pad}  … ${label} ${secs(Date.now() - started)}`);
    draw();
    live = { label, started, timer: setInterval(draw, 200) };
    live.timer.unref();
  };
  const line = (s: string) => {
    endLive();
    out.write(`${pad}${s}\n`);
  };
  return {
    runStarted: (i) => line(`run ${i.runId} · task ${i.taskId} · gates: ${i.gates.join(", ")}`),
    attemptStarted: (n, max) => line(`attempt ${n}/${max}`),
    builderStarted: (_n, d) => startLive(`builder: ${d.length > 60 ? `${d.slice(0, 57)}...` : d}`),
    builderFinished: (_n, r) =>
      line(
        `  builder ${r.timedOut ? "timed out" : `exited ${r.exitCode ?? "by signal"}`} after ${secs(r.durationMs)}`,
      ),
    findings: (_n, fs) => {
      for (const f of fs.slice(0, 8))
        line(`  ${f.severity === "blocking" ? "✗" : "!"} ${f.code}${f.path ? ` ${f.path}` : ""}`);
      if (fs.length > 8) line(`  … ${fs.length - 8} more findings`);
    },
    agentStep: (i) => {
      const what = `turn ${i.turn} step ${i.step}${i.tool ? ` · ${i.tool}` : " · model"} · ${i.tokens} tokens · $${i.costUsd.toFixed(4)}`;
      if (tty) startLive(what);
      else if (!i.tool) line(`  ${what}`);
    },
    gateStarted: (_n, id) => startLive(`gate ${id}`),
    gateFinished: (_n, id, r) =>
      line(`  ${r.passed ? "✓" : "✗"} gate ${id} ${secs(r.duration_ms)} ${r.passed ? "passed" : r.summary}`),
    close: endLive,
    runFinished: (e: Envelope) => {
      line(`${e.status} after ${e.attempts} attempt${e.attempts === 1 ? "" : "s"}: ${e.reason}`);
    },
  };
}
