import type { BuilderResult } from "../builder.js";

/** How long a halted agent gets after SIGTERM to end before its process group is killed. */
export const STOP_GRACE_MS = 3000;

/**
 * Why, and since when, an agent session is being stopped — the run was interrupted, or its provider is
 * down — for the builders that hold the agent's Stop (Claude Code, Codex). The first reason is kept; each
 * halt runs the builder's own stop (answer a held Stop, signal the process group) and wakes a pass that
 * waits on the agent.
 */
export class SessionHalt {
  /** The first reason given, or null while the session runs. */
  why: string | null = null;
  /** Resolves "halted" at the first halt. */
  readonly woken: Promise<"halted">;
  private wake: () => void = () => undefined;
  private listening: AbortSignal | null = null;

  constructor(private readonly stop: (why: string) => void) {
    this.woken = new Promise<"halted">((r) => {
      this.wake = () => r("halted");
    });
  }

  /** Halts on the run's interrupt (registered once per signal; at once when it already fired). */
  listen(signal: AbortSignal | undefined): void {
    if (!signal || this.listening === signal) return;
    this.listening = signal;
    const onAbort = () =>
      this.halt(`loopgate: the run was interrupted (${String(signal.reason ?? "aborted")}); stop now`);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  }

  /** Stops the session (idempotent: the builder's stop runs again with the first reason). */
  halt(why: string): void {
    if (this.why === null) this.why = why;
    this.stop(this.why);
    this.wake();
  }
}

/** A pass that ended because the session was halted: the runner records the interrupt, not this pass. */
export const haltedPass = (durationMs: number): BuilderResult => ({
  exitCode: null,
  signal: "SIGTERM",
  timedOut: false,
  durationMs,
  output: "",
  infrastructure: null,
});
