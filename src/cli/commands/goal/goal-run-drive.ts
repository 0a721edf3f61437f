import { RECHECK_SECONDS } from "../../../core/goal/schedule/next-wake.js";
import type { RunMode } from "../../../core/goal/schedule/schedule-step.js";
import {
  type LoopEvent,
  type LoopResult,
  runGoalLoop,
  type ScheduleProbe,
  type Sleeper,
} from "../../../runner/goal/schedule/goal-loop.js";
import {
  runScheduler,
  type ScheduledGoal,
  type SchedulerEvent,
} from "../../../runner/goal/schedule/store-scheduler.js";
import type { Tick } from "../../../runner/goal/turn/tick-outcome.js";
import { cliName } from "../../output/invocation.js";
import type { CommandIO } from "../../output/io.js";
import { eventLine, summaryJson, turnJson } from "./goal-run-format.js";

/** What `goal run` drives: the tick, the probe, the time. Injected so tests script the tick. */
export interface GoalRunDeps {
  tick: Tick;
  probe: ScheduleProbe;
  sleep: Sleeper;
  clock: () => Date;
  signal: AbortSignal;
}

/**
 * Runs the loop and prints it: a line per phase and per turn (text), or one JSON line per turn and a
 * summary line (`--json`, phases then go to stderr). Returns the loop's exit code.
 */
export async function driveGoalRun(
  io: CommandIO,
  /** `storeArg`: what the hints add (`--store …`, or nothing); `store`: the closing `store: …` line. */
  goal: { goalId: string; agentId: string; storeArg: string; store?: string },
  opts: { json: boolean; mode: RunMode },
  deps: GoalRunDeps,
): Promise<number> {
  const onEvent = (e: LoopEvent) => {
    if (!opts.json) return io.out(eventLine(e));
    if (e.kind === "turn") io.out(`${JSON.stringify(turnJson(e, goal.goalId))}\n`);
    else io.err(eventLine(e));
  };
  const r = await runGoalLoop(
    { tick: deps.tick, probe: deps.probe, sleep: deps.sleep, clock: deps.clock },
    { goalId: goal.goalId, agentId: goal.agentId, mode: opts.mode, signal: deps.signal, onEvent },
  );
  if (opts.json) io.out(`${JSON.stringify(summaryJson(goal.goalId, r))}\n`);
  else io.out(`${closingWords(goal.goalId, goal.storeArg, r)}${goal.store ? `${goal.store}\n` : ""}`);
  return r.code;
}

/** The last lines of a text `goal run`: why it stopped, and who must act or what to run next. */
export function closingWords(goalId: string, storeArg: string, r: LoopResult): string {
  const lg = `${cliName()} `;
  const store = storeArg ? ` ${storeArg}` : "";
  const head =
    r.stop === "terminal"
      ? `goal ${goalId} is closed (terminal) after ${r.turns} tick(s): ${r.why}\nnothing is left to run: every frontier item is proved; ${lg}goal history ${goalId}${store} shows its turns\n`
      : `goal ${goalId}: ${r.stop} after ${r.turns} tick(s): ${r.why}\n`;
  const last = r.last;
  switch (r.stop) {
    case "waiting_person":
      return last?.kind === "waiting_person" && last.gateId
        ? `${head}who must act: ${last.who}\nnext: ${lg}gate approve ${goalId} ${last.gateId}${store} (or reject, cancel, defer --until COND); then ${lg}goal run ${goalId}${store}\n`
        : `${head}${last?.kind === "waiting_person" ? `who must act: ${last.who}\n` : ""}next: ${lg}goal next ${goalId}${store} says what only a person can do now; then ${lg}goal run ${goalId}${store}\n`;
    case "stopped":
      return `${head}next: ${lg}goal resume ${goalId}${store}, then ${lg}goal run ${goalId}${store}\n`;
    case "blocked_health":
    case "failed":
      return `${head}next: ${lg}goal status ${goalId}${store} lists what to repair\n`;
    case "interrupted":
      return `${head}next: ${lg}goal run ${goalId}${store} continues from the log\n`;
    default:
      return head;
  }
}

/**
 * Runs `loopgate scheduler` and prints it: each goal's lines prefixed with its id (text), or one JSON
 * line per turn and a summary (`--json`). Returns its exit code.
 */
export async function driveScheduler(
  io: CommandIO,
  opts: { json: boolean; once: boolean; storeLabel: string },
  deps: GoalRunDeps & { goals: () => Promise<ScheduledGoal[]> },
): Promise<number> {
  const onEvent = (e: SchedulerEvent) => {
    if (e.kind === "goal") {
      if (!opts.json) io.out(eventLine(e.event, e.goalId));
      else if (e.event.kind === "turn") io.out(`${JSON.stringify(turnJson(e.event, e.goalId))}\n`);
      else io.err(eventLine(e.event, e.goalId));
    } else if (e.kind === "error") io.err(`loopgate scheduler: ${e.goalId}: the tick failed: ${e.message}\n`);
    else if (e.kind === "next" && e.at === null && !opts.json) io.out(`${e.goalId} dropped: ${e.why}\n`);
    else if (e.kind === "idle" && !opts.json) io.out(`sleeping until ${e.until.replace(/\.\d{3}Z$/, "Z")}\n`);
  };
  if (!opts.json)
    io.out(`scheduling the active goals of ${opts.storeLabel}${opts.once ? " (one pass)" : ""}\n`);
  const r = await runScheduler(
    { goals: deps.goals, tick: deps.tick, probe: deps.probe, sleep: deps.sleep, clock: deps.clock },
    { once: opts.once, recheckSeconds: RECHECK_SECONDS, signal: deps.signal, onEvent },
  );
  if (opts.json)
    io.out(`${JSON.stringify({ summary: true, exit_code: r.code, ticks: r.ticks, failures: r.failures })}\n`);
  else io.out(`scheduler stopped: ${r.ticks} tick(s), ${r.failures} needing repair\n`);
  return r.code;
}
