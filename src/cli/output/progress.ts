import type { Envelope } from "../../core/run/envelope.js";
import type { RunReporter } from "../../runner/run/context/reporter.js";
import { escapeControl, lineStreamer, logTail, oneLine } from "./excerpt.js";
import { type Hints, hintCommand } from "./hints.js";

const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** A run reporter that owns a timer: `close()` stops it, whatever state the run ended in. */
export interface ProgressReporter extends RunReporter {
  close(): void;
}

/**
 * Renders run progress on a stream: on a terminal a live line per running step (attempt n/N, the gate
 * being run with its elapsed time), elsewhere one plain line per phase (builder started and finished,
 * each tool the agent runs, gate started and finished). At most one live line (and one timer) exists at
 * a time: starting one ends the previous one, and the timer never keeps the process alive on its own.
 * With `verbose` (`--verbose`/`--follow`) the builder's and the gates' output is streamed too, line by
 * line, prefixed `builder| `, `gate ID| `.
 */
export function progressReporter(
  out: Pick<NodeJS.WriteStream, "write" | "isTTY">,
  options: { tty?: boolean; indent?: string; verbose?: boolean; hints?: Hints; runId?: string } = {},
): ProgressReporter {
  let runId: string | null = options.runId ?? null;
  const wholeLog = () =>
    options.hints && runId ? hintCommand(options.hints, `status ${runId} --json`) : undefined;
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
    const shown = escapeControl(label);
    const draw = () => out.write(`\r\x1b[2K${pad}  … ${shown} ${secs(Date.now() - started)}`);
    draw();
    live = { label, started, timer: setInterval(draw, 200) };
    live.timer.unref();
  };
  // Every line names things from outside (paths, gate summaries, reasons): escaped here, once.
  const line = (s: string) => {
    endLive();
    out.write(`${pad}${escapeControl(s)}\n`);
  };
  /** A running step: the live line on a terminal, a plain "started" line elsewhere. */
  const started = (label: string, plain: string) => (tty ? startLive(label) : line(plain));
  const builderStream = lineStreamer("builder| ", line);
  const gateStreams = new Map<string, ReturnType<typeof lineStreamer>>();
  const gateStream = (id: string) => {
    const s = gateStreams.get(id) ?? lineStreamer(`gate ${id}| `, line);
    gateStreams.set(id, s);
    return s;
  };
  const short = (d: string) => (d.length > 60 ? `${d.slice(0, 57)}...` : d);
  return {
    runStarted: (i) => {
      runId = i.runId;
      line(`run ${i.runId} · task ${i.taskId} · gates: ${i.gates.join(", ")}`);
    },
    warning: (t) => line(`warning: ${t}`),
    attemptStarted: (n, max) => line(`attempt ${n}/${max}`),
    builderStarted: (_n, d) => started(`builder: ${short(d)}`, `  builder started: ${short(d)}`),
    ...(options.verbose ? { builderOutput: (chunk: string) => builderStream.push(chunk) } : {}),
    builderFinished: (_n, r) => {
      builderStream.flush();
      line(
        `  builder ${r.timedOut ? "timed out" : `exited ${r.exitCode ?? "by signal"}`} after ${secs(r.durationMs)}`,
      );
    },
    findings: (_n, fs) => {
      for (const f of fs.slice(0, 8))
        line(`  ${f.severity === "blocking" ? "✗" : "!"} ${f.code}${f.path ? ` ${oneLine(f.path)}` : ""}`);
      if (fs.length > 8) line(`  … ${fs.length - 8} more findings`);
    },
    agentStep: (i) => {
      const what = `turn ${i.turn} step ${i.step}${i.tool ? ` · ${i.tool}` : " · model"} · ${i.tokens} tokens · $${i.costUsd.toFixed(4)}`;
      if (tty) startLive(what);
      else
        line(
          `  turn ${i.turn} step ${i.step} · ${i.tool ? `running tool ${i.tool}` : "model"} · ${i.tokens} tokens · $${i.costUsd.toFixed(4)}`,
        );
    },
    gateStarted: (_n, id) => started(`gate ${id}`, `  gate ${id} started`),
    ...(options.verbose ? { gateOutput: (id: string, chunk: string) => gateStream(id).push(chunk) } : {}),
    gateFinished: (_n, id, r) => {
      gateStreams.get(id)?.flush();
      gateStreams.delete(id);
      line(`  ${r.passed ? "✓" : "✗"} gate ${id} ${secs(r.duration_ms)} ${r.passed ? "passed" : r.summary}`);
      // Why, in a few lines (the whole log is in --json); the verbose stream already showed it all.
      if (!r.passed && !options.verbose)
        for (const l of logTail(r.log_excerpt, 3, 200, wholeLog())) line(`      | ${l}`);
    },
    note: (text) => line(`note: ${text}`),
    close: endLive,
    runFinished: (e: Envelope) => {
      line(`${e.status} after ${e.attempts} attempt${e.attempts === 1 ? "" : "s"}: ${oneLine(e.reason)}`);
    },
  };
}
