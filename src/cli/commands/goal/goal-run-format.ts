import type { WakeUp } from "../../../core/goal/schedule/scheduler.js";
import type { LoopEvent, LoopResult } from "../../../runner/goal/schedule/goal-loop.js";
import { encodeTickOutcome, type TickOutcome } from "../../../runner/goal/turn/tick-outcome.js";
import { cutLine, oneLine } from "../../output/excerpt.js";

// What `goal run` and `loopgate scheduler` print: a line per phase and per turn, and a JSON line per turn.

/** Text from outside (a builder, a gate log) as one bounded inert line. */
const cut = (s: string, width: number) => cutLine(oneLine(s), width);
const short = (iso: string | null) => (iso ? iso.replace(/\.\d{3}Z$/, "Z") : "");

/** The next wake-up in words: when, and why. */
export function wakeWords(w: WakeUp): string {
  switch (w.action) {
    case "run_now":
      return `run now (${w.why})`;
    case "wait_until":
      return `at ${short(w.at)} (${w.why})`;
    case "wait_state_change":
      return `on a state change (${w.why})`;
    case "ask_user":
      return `when a person decides (${w.why})`;
    case "repair_health":
      return `after a repair (${w.why})`;
    case "stop":
      return w.terminal ? `nothing: the goal is closed (${w.why})` : `never by itself (${w.why})`;
  }
}

/** The todo (or replan obligation) an outcome worked on, if any. */
export function workOf(o: TickOutcome): string | null {
  if (o.kind !== "advanced") return null;
  if (o.work.kind === "acceptance") return `acceptance ${o.work.acceptance_ids.join(", ")}`;
  return o.work.kind === "todo" ? o.work.todo_id : `replan ${o.work.obligation_id}`;
}

/** One outcome in words. */
export function outcomeWords(o: TickOutcome): string {
  switch (o.kind) {
    case "advanced":
      return `${o.changed ? "advanced" : "no change"}: ${cut(o.result, 300)}`;
    case "idle":
      return `idle: ${o.reason}`;
    case "waiting_person":
      return o.gateId ? `waiting on ${o.who} to decide ${o.gateId}` : `waiting on ${o.who}`;
    case "throttled":
      return `throttled: ${o.reason}`;
    case "terminal":
      return `terminal: ${o.closure}`;
    case "stopped":
      return `stopped: ${o.reason}`;
    case "busy":
      return `busy: a turn is in progress by ${o.holder} (lease until ${short(o.expiresAt)})`;
    case "failed":
      return `failed (${o.code}): ${cut(o.detail, 300)}`;
  }
}

/** The text line of a loop event, prefixed with the goal when several run in one process. */
export function eventLine(e: LoopEvent, goal?: string): string {
  const g = goal ? `${goal} ` : "";
  switch (e.kind) {
    case "progress":
      return `${g}turn ${e.turn} · ${e.progress.todo ?? "-"} · ${e.progress.phase}${e.progress.detail ? `: ${cut(e.progress.detail, 200)}` : ""}\n`;
    case "turn": {
      const todo = workOf(e.outcome);
      const turn = e.turn === null ? "no turn" : `turn ${e.turn}`;
      return `${g}${turn}${todo ? ` · ${todo}` : ""} · ${outcomeWords(e.outcome)} — next: ${wakeWords(e.wake)}\n`;
    }
    case "sleep":
      return `${g}sleeping until ${short(e.until)} (${e.why})\n`;
    case "interrupted":
      return `${g}interrupted after turn ${e.turn}: stopping (the goal is left as its last turn settled it)\n`;
  }
}

/** The JSON line of a turn (`--json`): what the tick did and the wake-up the host applies. */
export function turnJson(e: Extract<LoopEvent, { kind: "turn" }>, goal: string): Record<string, unknown> {
  const { wake: _w, ...outcome } = encodeTickOutcome(e.outcome);
  return {
    goal,
    turn: e.turn,
    todo: workOf(e.outcome),
    outcome: outcome.kind,
    detail: outcome,
    wake: e.wake,
    next: e.step.kind === "exit" ? { kind: "exit", code: e.step.code, stop: e.step.stop } : e.step,
  };
}

/** The summary (`--json`: the last line). */
export function summaryJson(goal: string, r: LoopResult): Record<string, unknown> {
  return {
    goal,
    summary: true,
    exit_code: r.code,
    stop: r.stop,
    why: r.why,
    ...(r.who !== undefined ? { who: r.who } : {}),
    turns: r.turns,
  };
}
