import { createHash } from "node:crypto";
import { dirname } from "node:path";
import type { GoalEventBody } from "../../../core/events/goal/goal-events.js";
import { spendKey, type TurnIdentity } from "../../../core/events/goal/turn-events.js";
import type { RecordedEvent } from "../../../core/events/loopgate-event.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import type { WakeUp } from "../../../core/goal/schedule/scheduler.js";
import type { TurnCommand } from "../../../core/goal/turn/turn-commands.js";
import { decideTurn } from "../../../core/goal/turn/turn-decider.js";
import { initialTurnState, type TurnState } from "../../../core/goal/turn/turn-state.js";
import type { LeaseOwner } from "../../../core/kernel/event-parts.js";
import type { Envelope } from "../../../core/run/envelope.js";
import type { SandboxMode } from "../../../sandbox/bubblewrap.js";
import type { EventStore } from "../../../store/kernel/event-store.js";
import type { LoadedTask } from "../../task-source/load-task.js";
import { type GoalRepo, goalRepo } from "../repo/goal-repo.js";
import type { WritebackPoint } from "../repo/writeback.js";
import type { AfterGoalAppend, GoalJournal } from "./goal-journal.js";
import type { TickRequest } from "./tick-outcome.js";

/** One run of a turn's todo task, as the host (the CLI, a worker) carries it out. */
export interface TurnRun {
  runId: string;
  /** The todo's task, its workspace the revision's tree. */
  loaded: LoadedTask;
  goal: { id: string; revision: string };
  /** A run with this id was started and did not finish (killed): continue it, do not start another. */
  resume: boolean;
  /** Acceptance: the gates alone run on the revision (no builder: the revision is the work). */
  gatesOnly?: boolean;
}

/** Runs a task to its envelope; injected so runner/ never imports cli/ (the CLI builds it on executeRun). */
export type RunHost = (run: TurnRun) => Promise<Envelope>;

/** Applies a scheduler hint to the host: `host_match` when its cadence already matches. Throws on failure. */
export type ScheduleHost = (wake: WakeUp) => Promise<"host_match" | "host_updated">;

/** What a tick is built with. */
export interface TickDeps {
  store: EventStore;
  localDir: string;
  runHost: RunHost;
  scheduleHost?: ScheduleHost;
  clock?: () => Date;
  owner?: LeaseOwner;
  afterGoalAppend?: AfterGoalAppend;
  /** Fault injection: called at each point inside a writeback (kill-point tests). */
  atWritebackPoint?: (point: WritebackPoint) => void;
  leaseTtlMs?: number;
  /** Where monitor polls run (default bubblewrap, as for gates). */
  sandbox?: SandboxMode;
  /**
   * The planner turn's model (`model` before the goal file's planner.model, `builderModel` — the
   * builder's --model — after it; default: the goal agent's model) and where proposed task paths resolve.
   */
  planner?: { model?: string; builderModel?: string; taskRoot?: string };
}

/** A turn's run as the store holds it: its events and the envelope they project to (null: unfinished). */
export interface RunLog {
  events: readonly RecordedEvent[];
  envelope: Envelope | null;
}

/** One tick's working set. */
export interface TickCtx {
  deps: TickDeps;
  req: TickRequest;
  j: GoalJournal;
  now: () => Date;
  /** Reports a phase; the turn number and todo are those of the turn being settled unless given. */
  progress(p: { phase: string; detail: string; todo?: string | null }): void;
  /** The blocked effects this tick already looked up again (once per tick, then the block is reported). */
  retriedReadbacks: Set<string>;
  /** Finished runs this tick read, by run id (run-log.ts): each is read and projected once. */
  runs: Map<string, RunLog>;
}

/** Where the goal's workspace and kept turn effects live (the folder's repository, or the shared store's). */
export const repoOf = (ctx: TickCtx): GoalRepo => goalRepo(ctx.deps.store, ctx.deps.localDir);

/** The key of a turn: goal/agent/turn_instance_id (the spend key and the writeback trailer). */
export const turnKey = (id: TurnIdentity) => spendKey(id);

/** The deterministic run id of a turn's host_execute: readback finds the run by it. */
export function turnRunId(id: TurnIdentity): string {
  const safe = (x: string) => x.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 40);
  const h = createHash("sha256").update(spendKey(id)).digest("hex").slice(0, 10);
  return `turn-${safe(id.goal_id)}-${safe(id.turn_instance_id)}-${h}`;
}

export const turnOf = (s: GoalState, id: TurnIdentity): TurnState =>
  s.turns[spendKey(id)] ?? initialTurnState();

/** A turn command as a goal-stream decision (the turn's facts are goal events). */
export const turnDecision =
  (cmd: TurnCommand) =>
  (s: GoalState): GoalEventBody[] =>
    decideTurn(cmd, turnOf(s, cmd.identity)) as unknown as GoalEventBody[];

/**
 * The folder of the goal file the goal was created from (where its relative paths resolve), or null:
 * from the journal's `goal_created`, as the goal's view takes it (nothing is read again).
 */
export async function goalFileDir(ctx: TickCtx): Promise<string | null> {
  const created = ctx.j.log.events.find((e) => e.type === "goal_created");
  const source = created?.type === "goal_created" ? (created.data.source?.path ?? null) : null;
  return source ? dirname(source) : null;
}
