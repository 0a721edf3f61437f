import { mkdirSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type LongTimer, setLongTimeout } from "../../core/kernel/long-timer.js";
import type { AgentRuntimeEventBody } from "../../core/run/run-decider.js";
import { runSandboxed } from "../../sandbox/bubblewrap.js";
import { SANDBOX_PATH, scrubbedEnv } from "../../sandbox/environment.js";
import type { ProcessResult } from "../../sandbox/process.js";
import { sandboxedAs } from "../../sandbox/sandbox-user.js";
import type { Builder, BuilderContext, BuilderResult } from "../builder.js";
import { providerDown } from "../claude/claude-provider-error.js";
import { freshHookDir } from "../claude/claude-settings.js";
import { type HookServer, startHookServer } from "../claude/hook-server.js";
import { failedCheck, fixMessage, HeldStop, stopAnswered, verdictMessage } from "../stop-gate/held-stop.js";
import type { HookInput, HookReply, StopInput } from "../stop-gate/hook-input.js";
import { haltedPass, SessionHalt, STOP_GRACE_MS } from "../stop-gate/session-halt.js";
import { type CodexInstall, codexPreflight, findCodex } from "./codex-find.js";
import { codexHooksDir, writeCodexHome } from "./codex-home.js";
import { CodexProviderWatch } from "./codex-provider-error.js";
import { codexFacts, codexSessionEvent, codexToolEvents, describeFacts } from "./exec-events.js";

/** How the Codex builder runs `codex exec`. */
export interface CodexSessionOptions {
  baseUrl: string;
  model: string;
  /** The `codex` to run; default $LOOPGATE_CODEX_BIN, then loopgate's pinned one, then PATH. */
  codex?: string;
  /** How long one Stop may wait for loopgate's answer (the gates' run), in seconds. */
  stopDeadlineSeconds: number;
  descriptor: Builder["descriptor"];
}

/** The environment variable holding the provider key when the caller passes none (a local model-server takes any). */
const PLACEHOLDER_KEY = "LOOPGATE_CODEX_API_KEY";

/** The Stop reply that lets Codex end its turn (exit 0, `continue: false`), saying why. */
const letGo = (why: string): HookReply => ({
  exit_code: 0,
  stdout: `${JSON.stringify({ continue: false, stopReason: why, systemMessage: why })}\n`,
  stderr: "",
});

const infra = (why: string): BuilderResult => ({
  exitCode: null,
  signal: null,
  timedOut: false,
  durationMs: 0,
  output: "",
  infrastructure: why,
});

/**
 * Codex as a builder that keeps running between attempts, gated through its own Stop hook. Attempt 1
 * starts `codex exec --json --dangerously-bypass-hook-trust` with a Stop hook declared in the private
 * CODEX_HOME/config.toml (outside the workspace, mounted read-only); the hook's forwarder hands each Stop
 * out of the sandbox to this process, which ends the attempt there: the runner runs the held-out gates.
 * Attempt n+1 answers that Stop with exit 2 and the required fix, so Codex continues in the same turn;
 * the verdict answers the last Stop with exit 0. If Codex exited instead (a failed turn, a crash), the
 * next attempt starts a new `codex exec` with the fix in the prompt. What Codex printed up to each Stop
 * becomes that attempt's facts (origin agent_runtime); each answer is a `stop_hook_answered` fact.
 */
export class CodexBuilder implements Builder {
  readonly descriptor: Builder["descriptor"];
  private server: HookServer | null = null;
  private ctx: BuilderContext | null = null;
  private running: Promise<ProcessResult> | null = null;
  private kill: AbortController | null = null;
  private stop = new HeldStop<ProcessResult>();
  private lastStop: StopInput | null = null;
  /** This process's stdout (its JSONL) and how much of it earlier attempts already turned into facts. */
  private out = "";
  private cut = 0;
  private unrecorded: AgentRuntimeEventBody[] = [];
  private home = "";
  private config = "";
  private hooksDir = "";
  /**
   * Why the session is being stopped (an interrupt, a provider that is down): a held Stop, and every later
   * one, is let go with the reason, and Codex's process group gets SIGTERM, then SIGKILL STOP_GRACE_MS later.
   */
  private readonly halting = new SessionHalt((why) => {
    if (this.stop.holding) void this.answer(letGo(why));
    if (this.running) this.killedByLoopgate = true;
    this.kill?.abort();
  });
  private watch = new CodexProviderWatch();
  /** Set when loopgate itself ended the process (a verdict, an interrupt): its exit is no session failure. */
  private killedByLoopgate = false;

  constructor(private readonly o: CodexSessionOptions) {
    this.descriptor = o.descriptor;
  }

  preflight(): string | null {
    return codexPreflight(this.o.codex);
  }

  async run(ctx: BuilderContext): Promise<BuilderResult> {
    this.ctx = ctx;
    const codex = findCodex(this.o.codex);
    if (!codex) return infra(codexPreflight(this.o.codex) ?? "codex not found");
    const t0 = performance.now();
    this.halting.listen(ctx.signal);
    if (!this.server && !this.halting.why) await this.setUp(ctx);
    await this.flush(ctx);
    const next = this.stop.next();
    if (this.halting.why) {
      // Interrupted before this pass began: nothing starts, and the runner records the interrupt.
    } else if (this.stop.holding)
      await this.answer({ exit_code: 2, stdout: "", stderr: fixMessage(ctx) }, ctx);
    else if (!this.running) this.spawn(ctx, codex, await readFile(ctx.promptFile, "utf8"));
    let timer: LongTimer | undefined;
    const timeout = new Promise<"timeout">((r) => {
      timer = setLongTimeout(() => r("timeout"), ctx.timeoutMs);
    });
    const wake = this.halting.why ? "halted" : await Promise.race([next, timeout, this.halting.woken]);
    timer?.clear();
    const durationMs = Math.round(performance.now() - t0);
    // The provider is down (Codex gave up, or nothing answered it): infrastructure, whatever woke the pass.
    const down = this.watch.failure;
    if (down) {
      this.halting.halt(`loopgate: the model provider failed (${down.slice(0, 300)}); the run ends here`);
      return { ...infra(providerDown(this.o.baseUrl, down)), durationMs, output: down };
    }
    // Interrupted: Codex is being stopped; the runner records the interrupt, not this pass.
    if (wake === "halted") return haltedPass(durationMs);
    if (wake === "timeout") {
      await this.end();
      return {
        exitCode: null,
        signal: "SIGKILL",
        timedOut: true,
        durationMs,
        output: "",
        infrastructure: null,
      };
    }
    const slice = this.take();
    const facts = codexFacts(slice);
    // Codex's session id is its thread id (printed once, in the first attempt's part of the JSONL).
    facts.thread_id ??= codexFacts(this.out).thread_id ?? (this.lastStop?.session_id || null);
    const attemptDir = dirname(ctx.promptFile);
    await writeFile(join(attemptDir, "codex-events.jsonl"), slice);
    await writeFile(join(attemptDir, "codex-facts.json"), `${JSON.stringify(facts, null, 2)}\n`);
    try {
      for (const event of codexToolEvents(facts, ctx.attempt)) await ctx.onRuntimeFact?.(event);
      await this.flush(ctx);
    } catch (e) {
      // The store failed: a Stop that waits is blocked with the reason, never let through.
      const why = `its facts could not be recorded: ${(e as Error).message}`;
      this.stop.answer(failedCheck(why));
      return { ...infra(`the Codex Stop hook could not record the session: ${why}`), durationMs };
    }
    if (wake.kind === "stop") {
      const said = wake.input.last_assistant_message ?? facts.final_message;
      return {
        exitCode: 0,
        signal: null,
        timedOut: false,
        durationMs,
        claim: said,
        output: `${describeFacts(facts)}\ncodex: Stop hook (held for loopgate's gates)${said ? `\n\n${said}` : ""}`,
        infrastructure: null,
      };
    }
    const r = wake.result;
    return {
      exitCode: r.exitCode,
      signal: r.signal,
      timedOut: r.timedOut,
      durationMs,
      claim: facts.final_message,
      output: `${describeFacts(facts)}${facts.final_message ? `\n\n${facts.final_message}` : ""}`,
      infrastructure: r.spawnError ? `codex could not start: ${r.spawnError}` : null,
    };
  }

  async windDown(v: { status: string; reason: string }): Promise<AgentRuntimeEventBody[]> {
    // Interrupted, or stopped already: the session ends now (a held Stop let go, SIGTERM, then SIGKILL).
    if (this.ctx?.signal?.aborted || this.halting.why)
      this.halting.halt(this.halting.why ?? verdictMessage(v));
    const held = this.stop.holding;
    if (held)
      await this.answer({
        exit_code: 0,
        stdout: `${JSON.stringify({ systemMessage: verdictMessage(v) })}\n`,
        stderr: "",
      });
    // Codex still working with no Stop to answer (a timeout, a failed recording): it is stopped.
    if (this.running && !held) await this.end();
    if (this.running) {
      const ended = await Promise.race([
        this.running.then(() => true),
        new Promise<false>((r) => setTimeout(() => r(false), 120_000).unref()),
      ]);
      if (!ended) await this.end();
    }
    const rest = codexFacts(this.take());
    for (const e of codexToolEvents(rest, Math.max(this.ctx?.attempt ?? 0, 0))) this.unrecorded.push(e);
    await this.dispose();
    const facts = this.unrecorded;
    this.unrecorded = [];
    return facts;
  }

  /** Stops Codex and the hook server; safe to call twice. */
  async dispose(): Promise<void> {
    await this.end();
    await this.server?.close();
    this.server = null;
  }

  /** Kills Codex (if it runs) and waits for it; a wake its exit queued is dropped with it. */
  private async end(): Promise<void> {
    if (this.running) this.killedByLoopgate = true;
    this.kill?.abort();
    await this.running?.catch(() => undefined);
    this.stop = new HeldStop<ProcessResult>();
  }

  private async setUp(ctx: BuilderContext): Promise<void> {
    const base = ctx.runDir ?? dirname(dirname(ctx.promptFile));
    // The socket lives in the forwarder's folder, which the sandbox mounts read-only (no credential needed).
    this.server = await startHookServer((input) => this.onHook(input), {
      dir: freshHookDir(codexHooksDir(base)),
      owner: sandboxedAs(ctx.sandbox),
    });
    const envKey = ctx.allowEnv.includes("OPENAI_API_KEY") ? "OPENAI_API_KEY" : PLACEHOLDER_KEY;
    const files = writeCodexHome(base, {
      baseUrl: this.o.baseUrl,
      model: this.o.model,
      envKey,
      node: process.execPath,
      socket: this.server.socket,
      deadlineSeconds: this.o.stopDeadlineSeconds,
    });
    this.home = files.home;
    this.config = files.config;
    this.hooksDir = files.hooksDir;
    this.envKey = envKey;
    if (!ctx.network)
      ctx.onNote?.(
        `codex: the network is shared with the builder's sandbox only so that codex reaches its provider at ${this.o.baseUrl}`,
      );
  }

  private envKey = PLACEHOLDER_KEY;

  private spawn(ctx: BuilderContext, codex: CodexInstall, prompt: string): void {
    mkdirSync(this.home, { recursive: true });
    const env = scrubbedEnv({
      home: "/tmp",
      allow: ctx.allowEnv,
      extra: {
        PATH: [...codex.path, SANDBOX_PATH].join(":"),
        CODEX_HOME: this.home,
        LOOPGATE_RUN_ID: ctx.runId,
        ...(this.envKey === PLACEHOLDER_KEY ? { [PLACEHOLDER_KEY]: "unused-by-a-local-provider" } : {}),
      },
    });
    const argv = [
      codex.binary,
      "exec",
      "--json",
      "--skip-git-repo-check",
      // The Stop hook is loopgate's own, in a config layer the agent cannot write: trust it headless.
      "--dangerously-bypass-hook-trust",
      "-s",
      "danger-full-access",
      "-C",
      ctx.workspace,
      prompt,
    ];
    this.kill = new AbortController();
    this.out = "";
    this.cut = 0;
    this.killedByLoopgate = false;
    const watch = new CodexProviderWatch();
    this.watch = watch;
    const attempt = ctx.attempt;
    let running: Promise<ProcessResult>;
    try {
      running = runSandboxed(
        {
          argv,
          cwd: ctx.workspace,
          writable: [ctx.workspace, this.home],
          readonly: [...ctx.mounts, ...codex.mounts, this.hooksDir, this.config],
          ...(ctx.masked?.length ? { masked: ctx.masked } : {}),
          ...(ctx.dependencies?.length ? { dependencies: ctx.dependencies } : {}),
          env,
          network: true,
          timeoutMs: 24 * 3600_000,
          ...(ctx.limits ? { limits: ctx.limits } : {}),
          maxOutputBytes: 16_000,
          onStdout: (chunk) => {
            this.out += chunk;
            // The provider is down: end Codex's wait now; the pass reports it (run).
            if (!this.halting.why && watch.push(chunk))
              this.halting.halt("loopgate: the model provider failed; the run ends here");
          },
          ...(ctx.onOutput ? { onOutput: ctx.onOutput } : {}),
          signal: this.kill.signal,
          killGraceMs: STOP_GRACE_MS,
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
        outputBytes: 0,
        spawnError: (e as Error).message,
      });
    }
    this.running = running;
    const stop = this.stop;
    void running.then((r) => {
      this.running = null;
      stop.drop();
      // An exit loopgate caused (a verdict let it go, an interrupt or a timeout killed it) is no session failure.
      const killed = this.killedByLoopgate || this.halting.why !== null;
      this.unrecorded.push(
        codexSessionEvent(codexFacts(this.out), Math.max(this.ctx?.attempt ?? attempt, 0), r.exitCode, {
          killedByLoopgate: killed,
        }),
      );
      stop.wake({ kind: "exit", result: r });
    });
  }

  /** The JSONL lines printed since the last attempt took its own (whole lines only, until the process ends). */
  private take(): string {
    const end = this.running ? this.out.lastIndexOf("\n") + 1 : this.out.length;
    const slice = end > this.cut ? this.out.slice(this.cut, end) : "";
    this.cut = Math.max(this.cut, end);
    return slice;
  }

  /** Answers the held Stop and records the answer (in the attempt, or with the wind-down facts). */
  private async answer(r: HookReply, ctx?: BuilderContext): Promise<void> {
    const fact = this.lastStop
      ? stopAnswered("codex", Math.max(this.ctx?.attempt ?? 0, 0), this.lastStop, r)
      : null;
    this.stop.answer(r);
    if (!fact) return;
    if (ctx?.onRuntimeFact) await ctx.onRuntimeFact(fact);
    else this.unrecorded.push(fact);
  }

  private async onHook(input: HookInput): Promise<HookReply> {
    // Only the Stop is declared. Anything else on the socket (the agent can reach it) adds no fact: Codex's
    // facts come from its own `exec --json` stdout alone.
    if (input.hook_event_name !== "Stop") return { exit_code: 0, stdout: "", stderr: "" };
    // The session is being stopped (an interrupt, a provider that is down): the Stop is let go, never held.
    if (this.halting.why) return letGo(this.halting.why);
    this.lastStop = input;
    return this.stop.hold(input);
  }

  /** Records the facts of Codex processes that ended while no attempt was recording. */
  private async flush(ctx: BuilderContext): Promise<void> {
    const facts = this.unrecorded;
    this.unrecorded = [];
    for (const f of facts) await ctx.onRuntimeFact?.(f);
  }
}
