import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { EventData } from "../../core/events.js";
import { setLongTimeout } from "../../core/long-timer.js";
import type { AgentRuntimeEventBody } from "../../core/run-decider.js";
import type { GoalPredicate } from "../../core/task.js";
import { runSandboxed } from "../../sandbox/bubblewrap.js";
import { scrubbedEnv } from "../../sandbox/environment.js";
import type { ProcessResult } from "../../sandbox/process.js";
import type { Builder, BuilderContext, BuilderResult } from "../builder.js";
import { fixMessage, HeldStop, stopAnswered, verdictMessage, type Wake } from "../stop-gate/held-stop.js";
import { goalAtStop, runFrozenCheck, stopPredicates, taskCompleted } from "./claude-gates.js";
import { claudePreflight } from "./claude-preflight.js";
import { writeHookFiles } from "./claude-settings.js";
import { type HookInput, type HookReply, type StopInput, toolFact, touchesOwnedPath } from "./hook-input.js";
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

/** Claude Code's own environment switches: no telemetry or update checks; only the provider is reached. */
const CLAUDE_ENV = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_TELEMETRY: "1",
};

const hasFlag = (args: readonly string[], ...names: string[]) =>
  args.some((a) => names.some((n) => a === n || a.startsWith(`${n}=`)));

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
  /** What Claude's runtime reported in this run, in order: the goal's and the task appraisals' evidence. */
  private facts: EventData<"agent_tool_observed">[] = [];
  private stops = 0;
  private goalBlocksUsed = 0;
  private taskBlocks = new Map<string, number>();

  constructor(private readonly o: ClaudeBuilderOptions) {
    this.descriptor = { kind: "claude-code", command: ["claude", ...o.extraArgs].join(" ") };
  }

  preflight(): string | null {
    return claudePreflight(this.o.program);
  }

  async run(ctx: BuilderContext): Promise<BuilderResult> {
    this.ctx = ctx;
    const t0 = performance.now();
    if (!this.server) await this.setUp(ctx);
    const next = this.next();
    if (!this.running && this.sessionId === null) this.spawn(ctx, ctx.prompt, null);
    else if (this.stop.holding) await this.answer({ exit_code: 2, stdout: "", stderr: fixMessage(ctx) }, ctx);
    else if (!this.running) this.spawn(ctx, fixMessage(ctx), this.sessionId);
    const timer = new Promise<"timeout">((r) => setLongTimeout(() => r("timeout"), ctx.timeoutMs).unref());
    const wake = await Promise.race([next, timer]);
    const durationMs = Math.round(performance.now() - t0);
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
    if (this.stop.holding)
      await this.answer({ exit_code: 0, stdout: `${JSON.stringify({ systemMessage: last })}\n`, stderr: "" });
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
    this.server = await startHookServer((input) => this.onHook(input));
    const files = writeHookFiles(join(base, "claude-hooks"), {
      node: process.execPath,
      url: this.server.url,
      token: this.server.token,
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
    const user = this.o.extraArgs;
    const args = [
      "-p",
      prompt,
      "--output-format",
      "stream-json",
      "--verbose",
      "--settings",
      this.settingsFile,
      // Project and local settings live in the workspace the agent writes: never read. The user source is
      // the private HOME's settings file, which is loopgate's and read-only.
      "--setting-sources",
      "user",
      ...(resume ? ["--resume", resume] : []),
      ...(hasFlag(user, "--allowedTools", "--allowed-tools", "--permission-mode")
        ? []
        : ["--allowedTools", "Bash,Edit,Write,Read,Glob,Grep"]),
      ...user,
    ];
    const pkg = dirname(dirname(realpathSync(this.o.program)));
    this.kill = new AbortController();
    this.reader = new StreamJsonReader();
    const onOutput = (chunk: string) => {
      this.reader.push(chunk);
      if (this.reader.report.sessionId) this.sessionId = this.reader.report.sessionId;
      ctx.onOutput?.(chunk);
    };
    const attempt = ctx.attempt;
    let running: Promise<ProcessResult>;
    try {
      running = runSandboxed(
        {
          argv: [this.o.program, ...args],
          cwd: ctx.workspace,
          writable: [ctx.workspace, this.home],
          readonly: [
            ...ctx.mounts,
            pkg,
            dirname(this.settingsFile),
            this.userSettings,
            dirname(ctx.promptFile),
          ],
          ...(ctx.masked?.length ? { masked: ctx.masked } : {}),
          ...(ctx.dependencies?.length ? { dependencies: ctx.dependencies } : {}),
          env: scrubbedEnv({
            home: this.home,
            allow: ctx.allowEnv,
            extra: { ...CLAUDE_ENV, ...this.o.providerEnv, LOOPGATE_RUN_ID: ctx.runId },
          }),
          network: true,
          timeoutMs: 24 * 3600_000,
          maxOutputBytes: 16_000,
          onOutput,
          signal: this.kill.signal,
          ...(ctx.limits ? { limits: ctx.limits } : {}),
        },
        ctx.sandbox,
      );
    } catch (e) {
      running = Promise.resolve({
        exitCode: null,
        signal: null,
        timedOut: false,
        durationMs: 0,
        output: "",
        spawnError: (e as Error).message,
      } as ProcessResult);
    }
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
    if (input.session_id) this.sessionId = input.session_id;
    const ctx = this.ctx;
    if (input.hook_event_name === "Stop") {
      // The goal gate first: while it is unmet the Stop is blocked here, and the held-out gates do not run.
      const goal = await this.goalGate(input.session_id);
      if (goal) return goal;
      this.lastStop = input;
      return this.stop.hold(input);
    }
    if (!ctx) return ok;
    if (input.hook_event_name === "TaskCompleted") {
      const seen: EventData<"agent_tool_observed"> = {
        attempt: ctx.attempt,
        agent: "claude-code",
        hook_event: "TaskCompleted",
        session_id: input.session_id,
        tool: "TaskCompleted",
        command: (input.task_subject ?? "").slice(0, 4000),
        exit_code: null,
        excerpt: (input.task_description ?? "").slice(0, 4000),
      };
      await ctx.onRuntimeFact?.({ type: "agent_tool_observed", data: seen });
      const id = input.task_id ?? "";
      const prior = this.taskBlocks.get(id) ?? 0;
      const r = await taskCompleted({
        facts: this.facts,
        attempt: ctx.attempt,
        sessionId: input.session_id,
        task: { id, subject: input.task_subject ?? "", description: input.task_description ?? "" },
        priorBlocks: prior,
        run: (command) => runFrozenCheck(command, { workspace: ctx.workspace, sandbox: ctx.sandbox }),
      });
      if (r.fact.blocked) this.taskBlocks.set(id, prior + 1);
      await ctx.onRuntimeFact?.({ type: "agent_step_appraised", data: r.fact });
      return r.reply;
    }
    await this.flush(ctx);
    const fact = toolFact(input, ctx.attempt);
    this.facts.push(fact);
    await ctx.onRuntimeFact?.({ type: "agent_tool_observed", data: fact });
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
      facts: this.facts,
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
