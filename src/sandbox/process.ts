import { spawn } from "node:child_process";
import type { Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { setLongTimeout } from "../core/kernel/long-timer.js";

/** What a finished subprocess left behind. A process that could not start has `spawnError` set. */
export interface ProcessResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  spawnError: string | null;
  durationMs: number;
  /** Combined stdout and stderr, head and tail kept, the cut said. */
  output: string;
  outputBytes: number;
  /** With `captureBytes`: stdout and stderr kept apart and whole, up to that many bytes each. */
  streams?: { stdout: Buffer; stderr: Buffer; overflow: boolean };
}

export interface RunProcessOptions {
  cwd: string;
  /** The complete environment of the child: nothing is inherited. */
  env: Readonly<Record<string, string>>;
  timeoutMs: number;
  maxOutputBytes?: number;
  onOutput?: (chunk: string) => void;
  /** Each decoded chunk of stdout alone (a JSONL reader that must not see stderr's lines interleaved). */
  onStdout?: (chunk: string) => void;
  /** Aborting kills the whole process group at once (the user pressed Ctrl-C). */
  signal?: AbortSignal;
  /**
   * With this, aborting sends the group SIGTERM first and SIGKILL only this many milliseconds later
   * (an agent that may end its session cleanly); the timeout still kills at once.
   */
  killGraceMs?: number;
  /** Written to the child's stdin, which is then closed; without it stdin is /dev/null. */
  input?: string | Buffer;
  /** Also keep stdout and stderr apart, byte for byte, up to this many bytes each (see `streams`). */
  captureBytes?: number;
  /**
   * Bytes the child reads from its descriptor 3, a pipe closed after them (bwrap's `--seccomp 3`). The
   * descriptor is inherited without close-on-exec, so it survives every exec down to the reader.
   */
  fd3Input?: Buffer;
}

/** Keeps the first and last bytes of a stream and counts what it cut. */
export class BoundedOutput {
  private head = "";
  private tail = "";
  private total = 0;
  constructor(private readonly limit: number) {}
  push(chunk: string): void {
    this.total += chunk.length;
    const half = Math.floor(this.limit / 2);
    if (this.head.length < half) {
      const take = chunk.slice(0, half - this.head.length);
      this.head += take;
      chunk = chunk.slice(take.length);
    }
    if (chunk) this.tail = (this.tail + chunk).slice(-half);
  }
  get length(): number {
    return this.total;
  }
  toString(): string {
    const cut = this.total - this.head.length - this.tail.length;
    return cut > 0 ? `${this.head}\n[… ${cut} characters cut …]\n${this.tail}` : this.head + this.tail;
  }
}

/** How long after the program exits its output pipes may stay open (descendants drain). */
const EXIT_GRACE_MS = 2000;

/**
 * Runs argv (never through a shell) in its own process group, with a complete environment, a hard
 * timeout that kills the whole group, and bounded output. Never throws for a child's failure.
 */
export function runProcess(argv: readonly string[], options: RunProcessOptions): Promise<ProcessResult> {
  const started = performance.now();
  const out = new BoundedOutput(options.maxOutputBytes ?? 16_000);
  const [program, ...args] = argv;
  return new Promise((resolve) => {
    let timedOut = false;
    let spawnError: string | null = null;
    const child = spawn(program ?? "", args, {
      cwd: options.cwd,
      env: { ...options.env },
      stdio: [
        options.input === undefined ? "ignore" : "pipe",
        "pipe",
        "pipe",
        ...(options.fd3Input === undefined ? [] : ["pipe" as const]),
      ],
      detached: true,
    });
    const fd3 = options.fd3Input === undefined ? null : (child.stdio[3] as Writable | null | undefined);
    if (fd3 && options.fd3Input !== undefined) {
      // Closed once written, so the reader sees its end and no descendant keeps `close` waiting on it.
      fd3.on("error", () => {});
      fd3.end(options.fd3Input, () => fd3.destroy());
    }
    if (options.input !== undefined && child.stdin) {
      // A child that exits without reading all of its input closes the pipe: EPIPE is not our failure.
      child.stdin.on("error", () => {});
      child.stdin.end(options.input);
    }
    const onData = (s: string) => {
      out.push(s);
      options.onOutput?.(s);
    };
    const cap = options.captureBytes;
    const kept = {
      stdout: [] as Buffer[],
      stderr: [] as Buffer[],
      sizes: { stdout: 0, stderr: 0 },
      overflow: false,
    };
    for (const name of ["stdout", "stderr"] as const) {
      const stream = child[name];
      if (!stream) continue;
      // Decode per stream, so a multi-byte character split across two reads is not mangled.
      const decoder = new StringDecoder("utf8");
      stream.on("data", (chunk: Buffer) => {
        if (cap !== undefined) {
          const room = cap - kept.sizes[name];
          if (chunk.length > room) kept.overflow = true;
          if (room > 0) {
            const part = chunk.subarray(0, room);
            kept[name].push(part);
            kept.sizes[name] += part.length;
          }
        }
        const s = decoder.write(chunk);
        if (s) onData(s);
        if (s && name === "stdout") options.onStdout?.(s);
      });
      stream.on("end", () => {
        const s = decoder.end();
        if (s) onData(s);
        if (s && name === "stdout") options.onStdout?.(s);
      });
    }
    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    // A gate's or builder's timeout may exceed setTimeout's ~24.8-day limit ("600h"): a plain timer
    // would fire at once and blame the program for a timeout it never reached.
    const timer = setLongTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    let termGrace: NodeJS.Timeout | undefined;
    const onAbort = () => {
      if (options.killGraceMs === undefined) return killGroup();
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGTERM");
      } catch {
        child.kill("SIGTERM");
      }
      termGrace = setTimeout(killGroup, options.killGraceMs);
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    let grace: NodeJS.Timeout | undefined;
    child.on("error", (err) => {
      spawnError = `${program}: ${err.message}`;
    });
    child.on("exit", () => {
      // The program is done: a descendant still holding stdout (a background job) must neither keep
      // the result waiting until the timeout nor outlive it. One that escaped the group (setsid)
      // cannot be killed here, so after a grace period its pipes are closed instead of waited on.
      killGroup();
      grace = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, EXIT_GRACE_MS);
    });
    child.on("close", (code, signal) => {
      timer.clear();
      options.signal?.removeEventListener("abort", onAbort);
      clearTimeout(grace);
      clearTimeout(termGrace);
      // Leave no descendant behind, even one that detached its stdio.
      killGroup();
      resolve({
        exitCode: code,
        signal: signal ?? null,
        timedOut,
        spawnError,
        durationMs: Math.round(performance.now() - started),
        output: out.toString(),
        outputBytes: out.length,
        ...(cap !== undefined
          ? {
              streams: {
                stdout: Buffer.concat(kept.stdout),
                stderr: Buffer.concat(kept.stderr),
                overflow: kept.overflow,
              },
            }
          : {}),
      });
    });
  });
}
