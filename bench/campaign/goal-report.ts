// The goal-turn cells' table: its columns differ from the run cells' (a turn's once-only facts).
import type { GoalKillPlan, GoalOutcome } from "./goal-cycle.js";
import type { PgGoalKillPlan } from "./goal-pg-cycle.js";

export interface GoalTally {
  kills: number;
  goalFault: number;
  runFault: number;
  signal: number;
  /** Kills around the upload of a writeback's git objects to a PostgreSQL store. */
  upload: number;
  inDoubt: number;
  corrupted: number;
  lost: number;
  blind: number;
  notSettled: number;
  doubled: number;
  unwritten: number;
  settledLike: number;
}

export const emptyGoalTally = (): GoalTally => ({
  kills: 0,
  goalFault: 0,
  runFault: 0,
  signal: 0,
  upload: 0,
  inDoubt: 0,
  corrupted: 0,
  lost: 0,
  blind: 0,
  notSettled: 0,
  doubled: 0,
  unwritten: 0,
  settledLike: 0,
});

/** Adds one delivered kill: corrupted and settled count kills; the other problem columns count findings. */
export function addGoal(
  t: GoalTally,
  how: GoalKillPlan["how"] | PgGoalKillPlan["how"],
  o: GoalOutcome,
): void {
  t.kills++;
  if (how === "goal-fault") t.goalFault++;
  else if (how === "run-fault") t.runFault++;
  else if (how === "upload-fault") t.upload++;
  else t.signal++;
  t.inDoubt += o.inDoubtAtKill > 0 ? 1 : 0;
  t.corrupted += o.corrupted.length > 0 ? 1 : 0;
  t.lost += o.lost.length;
  t.blind += o.blind.length;
  t.notSettled += o.notSettled.length;
  t.doubled += o.doubled.length;
  t.unwritten += o.unwritten.length;
  t.settledLike += o.settledLikeReference ? 1 : 0;
}

/** Every must-be-zero column is zero and every killed turn settled as the uninterrupted one. */
export const goalClean = (t: GoalTally) =>
  t.corrupted === 0 &&
  t.lost === 0 &&
  t.blind === 0 &&
  t.notSettled === 0 &&
  t.doubled === 0 &&
  t.unwritten === 0 &&
  t.settledLike === t.kills;

export const GOAL_CELL = "sqlite · goal turn · tick+tick";
/** The Postgres goal cells: a `worker --once` killed, then one or two workers take the turn over. */
export const PG_GOAL_CELLS = ["postgres · goal turn · 1 worker", "postgres · goal turn · 2 workers"] as const;

export function goalTable(rows: readonly (readonly [string, GoalTally])[]): string {
  const head = [
    "cell",
    "kills (goal append/run event/signal/upload)",
    "left a call in doubt",
    "corrupted logs",
    "lost acknowledged events",
    "blind re-runs of in-doubt calls",
    "turns not settled",
    "doubled commits/spends/completions",
    "completions without writeback",
    "turn settled like uninterrupted",
  ];
  const body = rows.map(([cell, t]) => [
    cell,
    `${t.kills} (${t.goalFault}/${t.runFault}/${t.signal}/${t.upload})`,
    String(t.inDoubt),
    String(t.corrupted),
    String(t.lost),
    String(t.blind),
    String(t.notSettled),
    String(t.doubled),
    String(t.unwritten),
    `${t.settledLike}/${t.kills}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? "").length)));
  const md = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [md(head), md(widths.map((w) => "-".repeat(w))), ...body.map(md)].join("\n");
}
