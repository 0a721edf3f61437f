import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type LongTimer, setLongTimeout } from "../../core/kernel/long-timer.js";
import type { AgentRuntimeEventBody } from "../../core/run/run-decider.js";
import type { GoalPredicate } from "../../core/task/task.js";
import type { ProcessResult } from "../../sandbox/process.js";
import { sandboxedAs } from "../../sandbox/sandbox-user.js";
import type { Builder, BuilderContext, BuilderResult } from "../builder.js";
import { fixMessage, HeldStop, stopAnswered, verdictMessage, type Wake } from "../stop-gate/held-stop.js";
import {
  type HookInput,
  type HookReply,
  type StopInput,
  toolFact,
  touchesOwnedPath,
} from "../stop-gate/hook-input.js";
import { haltedPass, SessionHalt } from "../stop-gate/session-halt.js";
import { goalAtStop, stopPredicates } from "./claude-gates.js";
import { claudePreflight } from "./claude-preflight.js";
import { startClaude } from "./claude-process.js";
import { ClaudeProviderWatch, providerDown } from "./claude-provider-error.js";
import { claudeArgs, freshHookDir, writeHookFiles } from "./claude-settings.js";
import { ConfirmedFacts } from "./confirmed-facts.js";
import { type HookServer, startHookServer } from "./hook-server.js";
import { StreamJsonReader, sessionFact } from "./stream-json.js";

/** How `loopgate claude` runs Claude Code. */
export interface ClaudeBuilderOptions {
  /** The claude binary (resolved, absolute). */
  program: string;
  /** The user's own claude arguments (after `--`). */
  extraArgs: readonly string[];
  /** How long one Stop may take to answer (the gates' run), in seconds. */
  stopDeadlineSeconds: number;
  /** Provider variables for this builder only (a benchmark's own model-server per run), set after allowEnv's. */
  providerEnv?: Readonly<Record<string, string>>;
  /** The task's goal predicates, judged at each Stop over the session's runtime facts (claude-gates.ts). */
  goal?: readonly GoalPredicate[];
  /** How many Stops the goal may block in the whole session (so that Claude's own block cap comes last). */
  goalBlocks?: number;
}

/** A hook reply that ends Claude's session: Claude Code honours `continue: false` on any hook, Stop included. */
export function endSession(why: string): HookReply {
  return { exit_code: 0, stdout: `${JSON.stringify({ continue: false, stopReason: why })}\n`, stderr: "" };
}

/**
 * Claude Code as a builder that keeps running between attempts. Attempt 1 starts `claude -p`; its Stop
 * hook (forwarded out of the sandbox to this process) ends the attempt: the runner observes the workspace
 * and runs the held-out gates as for any builder. Attempt n+1 answers that Stop with exit 2 and the
 * required fix, so Claude continues in the same session; if Claude already exited (its hook timed out,
 * its own block cap, a crash), the session is resumed with `--resume` and the fix as the prompt. The
 * verdict answers the last Stop with exit 0 and loopgate's message, and Claude's result line is recorded.
 */
export class ClaudeBuilder implements Builder {
  readonly descriptor: Builder["descriptor"];
  private server: HookServer | null = null;
  private ctx: BuilderContext | null = null;
  private running: Promise<ProcessResult> | null = null;
  private kill: AbortController | null = null;
  private reader = new StreamJsonReader();
  private sessionId: string | null = null;
  private stop = new HeldStop<ProcessResult>();
  private lastStop: StopInput | null = null;
  private unrecorded: AgentRuntimeEventBody[] = [];
  private owned: string[] = [];
  /** The session's tool calls: hook reports decided against Claude's own stream. */
  private readonly seen = new ConfirmedFacts();
  private stops = 0;
  private goalBlocksUsed = 0;
  private taskBlocks = new Map<string, number>();
  /**
   * Why the session is being stopped (an interrupt, a provider that is down): a held Stop, and every later
   * hook, is answered `continue: false`, and Claude's process group gets SIGTERM, then SIGKILL STOP_GRACE_MS later.
   */
  private readonly halting = new SessionHalt((why) => {
    if (this.stop.holding) void this.answer(endSession(why));
    this.kill?.abort();
  });
  private watch = new ClaudeProviderWatch();

  constructor(private readonly o: ClaudeBuilderOptions) {
    this.descriptor = { kind: "claude-code", command: ["claude", ...o.extraArgs].join(" ") };
  }

  preflight(): string | null {
    return claudePreflight(this.o.program);
  }

  async run(ctx: BuilderContext): Promise<BuilderResult> {
    this.ctx = ctx;
    const t0 = performance.now();
    this.halting.listen(ctx.signal);
    if (!this.server && !this.halting.why) await this.setUp(ctx);
    const next = this.next();
    if (this.halting.why) {
      // Interrupted before this pass began: nothing starts, and the runner records the interrupt.
    } else if (!this.running && this.sessionId === null) this.spawn(ctx, ctx.prompt, null);
    else if (this.stop.holding) await this.answer({ exit_code: 2, stdout: "", stderr: fixMessage(ctx) }, ctx);
    else if (!this.running) this.spawn(ctx, fixMessage(ctx), this.sessionId);
    let timer: LongTimer | undefined;
    const timeout = new Promise<"timeout">((r) => {
      timer = setLongTimeout(() => r("timeout"), ctx.timeoutMs).unref();
    });
    const wake = this.halting.why ? "halted" : await Promise.race([next, timeout, this.halting.woken]);
    timer?.clear();
    const durationMs = Math.round(performance.now() - t0);
    // The provider is down (Claude said so, or went unanswered): infrastructure, whatever else woke the pass.
    const down = this.watch.failure;
    if (down) {
      this.halting.halt(`loopgate: the model provider failed (${down.slice(0, 300)}); the run ends here`);
      return {
        exitCode: null,
        signal: null,
        timedOut: false,
        durationMs,
        output: down,
        infrastructure: providerDown(this.providerUrl(ctx), down),
      };
    }
    // Interrupted: Claude is being stopped; the runner records the interrupt, not this pass.
    if (wake === "halted") return haltedPass(durationMs);
    if (wake === "timeout") {
      this.kill?.abort();
      return {
        exitCode: null,
        signal: "SIGKILL",
        timedOut: true,
        durationMs,
        output: "",
        infrastructure: null,
      };
    }
    if (wake.kind === "stop")
      return {
        exitCode: 0,
        signal: null,
        timedOut: false,
        durationMs,
        output: wake.input.last_assistant_message ?? "",
        infrastructure: null,
      };
    const r = wake.result;
    const started = r.spawnError ? `Claude Code could not start: ${r.spawnError}` : null;
    return {
      exitCode: r.exitCode,
      signal: r.signal,
      timedOut: r.timedOut,
      durationMs,
      output:
        typeof this.reader.report.result?.result === "string" ? this.reader.report.result.result : r.output,
      infrastructure: started,
    };
  }

  async windDown(v: { status: string; reason: string }): Promise<AgentRuntimeEventBody[]> {
    const last = verdictMessage(v);
    // Interrupted, or stopped already: the session ends now (a held Stop told to stop, SIGTERM, then SIGKILL).
    if (this.ctx?.signal?.aborted || this.halting.why) this.halting.halt(this.halting.why ?? last);
    else if (this.stop.holding)
      await this.answer({ exit_code: 0, stdout: `${JSON.stringify({ systemMessage: last })}\n`, stderr: "" });
    // Claude still working with no Stop to answer (a timeout, an infrastructure failure): it is stopped.
    else if (this.running) this.halting.halt(last);
    if (this.running) {
      const ended = await Promise.race([
        this.running.then(() => true),
        new Promise<false>((r) => setTimeout(() => r(false), 120_000).unref()),
      ]);
      if (!ended) {
        this.kill?.abort();
        await this.running.catch(() => undefined);
      }
    }
    await this.dispose();
    this.unrecorded.push(...this.seen.settleRest());
    const facts = this.unrecorded;
    this.unrecorded = [];
    return facts;
  }

  /** Stops Claude and the hook server; safe to call twice. */
  async dispose(): Promise<void> {
    this.kill?.abort();
    await this.running?.catch(() => undefined);
    await this.server?.close();
    this.server = null;
  }

  private async setUp(ctx: BuilderContext): Promise<void> {
    const base = ctx.runDir ?? dirname(dirname(ctx.promptFile));
    const dir = freshHookDir(join(base, "claude-hooks"));
    this.server = await startHookServer((input) => this.onHook(input), {
      dir,
      owner: sandboxedAs(ctx.sandbox),
    });
    const files = writeHookFiles(dir, {
      node: process.execPath,
      socket: this.server.socket,
      deadlineSeconds: this.o.stopDeadlineSeconds,
    });
    this.owned = [files.dir];
    this.settingsFile = files.settingsFile;
    this.home = join(base, "claude-home");
    mkdirSync(join(this.home, ".claude"), { recursive: true, mode: 0o700 });
    // The user settings Claude reads in its private HOME: empty, and mounted read-only over itself.
    this.userSettings = join(this.home, ".claude", "settings.json");
    writeFileSync(this.userSettings, "{}\n", { mode: 0o444 });
    await ctx.onFinding?.({
      code: "network_shared",
      severity: "warning",
      detail:
        "Claude Code ran with the host network shared (it must reach its provider); the rest of its sandbox is loopgate's: only the run workspace and a private HOME are writable",
    });
  }

  private settingsFile = "";
  private home = "";
  private userSettings = "";

  private spawn(ctx: BuilderContext, prompt: string, resume: string | null): void {
    const args = claudeArgs({ prompt, settingsFile: this.settingsFile, resume, user: this.o.extraArgs });
    this.kill = new AbortController();
    // Its stdout alone (never stderr's lines between them): the stream that confirms hook reports.
    this.reader = new StreamJsonReader(this.seen.calls);
    const onStdout = (chunk: string) => {
      this.reader.push(chunk);
      if (this.reader.report.sessionId) this.sessionId = this.reader.report.sessionId;
    };
    const watch = new ClaudeProviderWatch();
    this.watch = watch;
    const onOutput = (chunk: string) => {
      ctx.onOutput?.(chunk);
      // The provider is down: end Claude's retries now; the pass reports it (run).
      if (!this.halting.why && watch.push(chunk))
        this.halting.halt(`loopgate: the model provider failed; the run ends here`);
    };
    const attempt = ctx.attempt;
    const running = startClaude({
      program: this.o.program,
      args,
      ctx,
      home: this.home,
      settingsFile: this.settingsFile,
      userSettings: this.userSettings,
      providerEnv: this.o.providerEnv,
      onOutput,
      onStdout,
      signal: this.kill.signal,
    });
    this.running = running;
    void running.then(async (r) => {
      this.reader.end();
      if (this.reader.report.sessionId) this.sessionId = this.reader.report.sessionId;
      this.running = null;
      // Its hook can no longer be answered: the process is gone.
      this.stop.drop();
      const fact: AgentRuntimeEventBody = {
        type: "agent_session_finished",
        data: sessionFact(this.reader.report, Math.max(this.ctx?.attempt ?? attempt, 0), r.exitCode),
      };
      this.unrecorded.push(fact);
      this.wake({ kind: "exit", result: r });
    });
  }

  /**
   * The provider Claude was pointed at: loopgate's own URL; else the caller's ANTHROPIC_BASE_URL, named by
   * its variable (a passed variable's value is redacted from the log: a URL can carry a token); else
   * Anthropic's, Claude Code's default.
   */
  private providerUrl(ctx: BuilderContext): string {
    if (this.o.providerEnv?.ANTHROPIC_BASE_URL) return this.o.providerEnv.ANTHROPIC_BASE_URL;
    if (ctx.allowEnv.includes("ANTHROPIC_BASE_URL") && process.env.ANTHROPIC_BASE_URL)
      return "$ANTHROPIC_BASE_URL";
    return "https://api.anthropic.com (Claude Code's default)";
  }

  private next(): Promise<Wake<ProcessResult>> {
    return this.stop.next();
  }

  private wake(w: Wake<ProcessResult>): void {
    this.stop.wake(w);
  }

  /**
   * Answers the held Stop; the answer is a fact of the run (recorded in the attempt, or at wind-down
   * with the session's facts). A block is given even when its recording fails.
   */
  private async answer(r: HookReply, ctx?: BuilderContext): Promise<void> {
    const fact = this.lastStop
      ? stopAnswered("claude-code", Math.max(this.ctx?.attempt ?? 0, 0), this.lastStop, r)
      : null;
    this.stop.answer(r);
    if (!fact) return;
    if (ctx?.onRuntimeFact) await ctx.onRuntimeFact(fact);
    else this.unrecorded.push(fact);
  }

  private async onHook(input: HookInput): Promise<HookReply> {
    const ok = { exit_code: 0, stdout: "", stderr: "" };
    // The session is being stopped (an interrupt, a provider that is down): no hook gets work any more.
    if (this.halting.why) return endSession(this.halting.why);
    // Claude's stream names its session; a hook's word (anyone on the socket may send one) only until then.
    if (input.session_id && !this.reader.report.sessionId) this.sessionId = input.session_id;
    const ctx = this.ctx;
    if (input.hook_event_name === "Stop") {
      // Every tool report is decided against Claude's stream before anything is judged on the facts.
      if (ctx) await this.seen.settle(ctx, { wait: true, final: true });
      // The goal gate first: while it is unmet the Stop is blocked here, and the held-out gates do not run.
      const goal = await this.goalGate(input.session_id);
      if (goal) return goal;
      this.lastStop = input;
      return this.stop.hold(input);
    }
    if (!ctx) return ok;
    if (input.hook_event_name === "TaskCompleted") {
      const id = input.task_id ?? "";
      const prior = this.taskBlocks.get(id) ?? 0;
      const r = await this.seen.taskCompleted(input, ctx, prior);
      if (r.blocked) this.taskBlocks.set(id, prior + 1);
      return r.reply;
    }
    await this.flush(ctx);
    this.seen.report(toolFact(input, ctx.attempt));
    await this.seen.settle(ctx, { wait: false, final: false });
    const owned = touchesOwnedPath(input, this.owned);
    if (owned)
      await ctx
        .onFinding?.({
          code: "hook_settings_tampering",
          severity: "warning",
          path: owned,
          detail: `the agent's ${input.tool_name} call named ${owned}, loopgate's hook settings (read-only to it): ${toolFact(input, ctx.attempt).command.slice(0, 300)}`,
        })
        .catch(() => undefined);
    return ok;
  }

  /** The goal gate at this Stop: a block with the unmet predicates, or null to go on to the held-out gates. */
  private async goalGate(sessionId: string): Promise<HookReply | null> {
    const ctx = this.ctx;
    const predicates = stopPredicates(this.o.goal ?? []);
    if (!ctx || predicates.length === 0) return null;
    this.stops += 1;
    const g = goalAtStop({
      predicates,
      facts: this.seen.facts,
      workspace: ctx.workspace,
      attempt: ctx.attempt,
      sessionId,
      stop: this.stops,
      blocksLeft: (this.o.goalBlocks ?? 0) - this.goalBlocksUsed,
    });
    await ctx.onRuntimeFact?.({ type: "agent_goal_evaluated", data: g.fact });
    if (g.reply) this.goalBlocksUsed += 1;
    return g.reply;
  }

  /** Records the session facts of Claude processes that ended while an attempt was running. */
  private async flush(ctx: BuilderContext): Promise<void> {
    const facts = this.unrecorded;
    this.unrecorded = [];
    for (const f of facts) await ctx.onRuntimeFact?.(f);
  }
}
