import type { EventData } from "../../core/events/loopgate-event.js";
import type { AgentRuntimeEventBody } from "../../core/run/run-decider.js";
import type { BuilderContext } from "../builder.js";
import type { HookReply, TaskCompletedInput } from "../stop-gate/hook-input.js";
import { runFrozenCheck, taskCompleted } from "./claude-gates.js";
import type { StreamToolCalls } from "./stream-json.js";
import { type SettledReport, ToolReports, taskCompletion } from "./transcript.js";

/** How long a hook waits for Claude's stream to print the calls the reports name (it normally has already). */
const STREAM_GRACE_MS = 2000;

type Recorder = Pick<BuilderContext, "onRuntimeFact" | "onFinding">;

/**
 * The tool calls of a `loopgate claude` session as loopgate knows them: the hook reports, each decided
 * against Claude's own stream-json (confirmed, or not and never evidence), recorded in the reports' order.
 */
export class ConfirmedFacts {
  /** What Claude's runtime reported in this run, in order, each confirmed or not by its stream: the evidence. */
  readonly facts: EventData<"agent_tool_observed">[] = [];
  /** The tool calls Claude's stream-json printed, across its processes (StreamJsonReader fills it). */
  readonly calls: StreamToolCalls = new Map();
  private reports = new ToolReports();
  private recording: Promise<void> = Promise.resolve();

  /** A hook's report of a tool call, waiting to be decided. */
  report(fact: EventData<"agent_tool_observed">): void {
    this.reports.report(fact);
  }

  /** Only what Claude's stream confirmed: a forged report neither fills a span nor declares a check. */
  confirmed(): EventData<"agent_tool_observed">[] {
    return this.facts.filter((f) => f.confirmed !== false);
  }

  /**
   * Decides the waiting reports that Claude's stream now settles and records them in order. `wait`: give
   * the stream STREAM_GRACE_MS to print what the reports (or `until`) need (it has, by a Stop: Claude
   * prints each tool_result before its next model request); `final`: what it still lacks is unconfirmed.
   */
  async settle(ctx: Recorder, o: { wait: boolean; final: boolean }, until: () => boolean = () => true) {
    const t0 = performance.now();
    for (;;) {
      await this.record(ctx, this.reports.settle(this.calls, false));
      const done = this.reports.waiting === 0 && until();
      if (done || !o.wait || performance.now() - t0 >= STREAM_GRACE_MS) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    if (o.final) await this.record(ctx, this.reports.settle(this.calls, true));
  }

  /** At wind-down: the reports still waiting, decided on the whole stream, as facts to record then. */
  settleRest(): AgentRuntimeEventBody[] {
    return this.reports.settle(this.calls, true).map(({ fact }) => {
      this.facts.push(fact);
      return { type: "agent_tool_observed", data: fact };
    });
  }

  /**
   * Claude's TaskCompleted hook: recorded (confirmed when the stream shows the TaskUpdate that completes
   * the task), then refused while the task's frozen check fails, judged on confirmed calls only.
   */
  async taskCompleted(
    input: TaskCompletedInput,
    ctx: BuilderContext,
    priorBlocks: number,
  ): Promise<{ reply: HookReply; blocked: boolean }> {
    const id = input.task_id ?? "";
    await this.settle(ctx, { wait: true, final: false }, () => taskCompletion(this.calls, id));
    const seen: EventData<"agent_tool_observed"> = {
      attempt: ctx.attempt,
      agent: "claude-code",
      hook_event: "TaskCompleted",
      session_id: input.session_id,
      tool: "TaskCompleted",
      command: (input.task_subject ?? "").slice(0, 4000),
      exit_code: null,
      excerpt: (input.task_description ?? "").slice(0, 4000),
      confirmed: taskCompletion(this.calls, id),
    };
    await ctx.onRuntimeFact?.({ type: "agent_tool_observed", data: seen });
    const r = await taskCompleted({
      facts: this.confirmed(),
      attempt: ctx.attempt,
      sessionId: input.session_id,
      task: { id, subject: input.task_subject ?? "", description: input.task_description ?? "" },
      priorBlocks,
      run: (command) => runFrozenCheck(command, { workspace: ctx.workspace, sandbox: ctx.sandbox }),
    });
    await ctx.onRuntimeFact?.({ type: "agent_step_appraised", data: r.fact });
    return { reply: r.reply, blocked: r.fact.blocked };
  }

  /**
   * Takes decided reports into the facts at once, and records them after every earlier recording: hooks
   * are answered concurrently (anyone on the socket may send one), the log keeps the reports' order.
   */
  private record(ctx: Recorder, settled: readonly SettledReport[]): Promise<void> {
    if (settled.length === 0) return this.recording;
    for (const { fact } of settled) this.facts.push(fact);
    const run = this.recording.then(async () => {
      for (const { fact, why } of settled) {
        await ctx.onRuntimeFact?.({ type: "agent_tool_observed", data: fact });
        if (why)
          await ctx
            .onFinding?.({
              code: "hook_report_unconfirmed",
              severity: "warning",
              detail: `a ${fact.tool} report (${fact.command.slice(0, 300)}) that Claude Code's own stream does not confirm: ${why}; it counts for no goal or step`,
            })
            .catch(() => undefined);
      }
    });
    // A failed recording fails the hook that asked for it (a Stop is then blocked); later ones still run.
    this.recording = run.catch(() => undefined);
    return run;
  }
}
