// One goal-turn kill of the campaign on PostgreSQL: a goal created in the campaign's database and queued
// with `goal submit`; a `loopgate worker --once` (its own --work-dir, deleted after its death) killed at a
// goal-stream append, inside the todo's run, around the upload of the writeback's git objects, or by a
// SIGKILL after the turn's bind; the store's check and the log invariants over every stream; then one or
// two workers in fresh folders (sharing nothing with the dead one but the database) take the turn over
// and run the goal until idle; then the turn's facts each exactly once, its commit found in the goal's
// history as the store alone holds it, and the turn settled as an uninterrupted worker settles it.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { RecordedEvent } from "../../src/core/events/loopgate-event.js";
import { goalState } from "../../src/runner/goal/goal-engine.js";
import { goalStream } from "../../src/runner/goal/goal-store.js";
import { goalRepo } from "../../src/runner/goal/repo/goal-repo.js";
import { turnRunId } from "../../src/runner/goal/turn/tick-context.js";
import type { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { removeTreeSync } from "../../src/workspace/remove-tree.js";
import { poller } from "./cycle.js";
import { type TurnRef, trailerCommits, turnCounts, turnProblems } from "./goal-checks.js";
import type { GoalOutcome, GoalReference } from "./goal-cycle.js";
import { blindReruns, logProblems, lostAcknowledged, openMutatingCalls, shortOfCount } from "./log-checks.js";
import { loopgate, ROOT, sleep } from "./proc.js";
import type { CampaignStore } from "./store-checks.js";

export type PgGoalMode = "1 worker" | "2 workers";

export type PgGoalKillPlan =
  | { how: "goal-fault"; k: number }
  | { how: "run-fault"; k: number }
  | { how: "upload-fault"; at: "before" | "after" }
  | { how: "signal"; delayMs: number };

export interface PgGoalContext {
  url: string;
  /** The campaign's reader of the database (events), and a store for the goal repository's content. */
  store: CampaignStore;
  content: PostgresEventStore;
  root: string;
  reference: GoalReference;
}

const LEASE = ["--lease", "2s"];
const TODO = "todo_quoted_fields";
const turnOf = (goalId: string): TurnRef => ({ key: `${goalId}/oracle/t1`, instance: "t1", todo: TODO });

let goals = 0;
/** A goal of one todo (the example's first) and its acceptance, under a fresh id, created and queued. */
/**
 * Finishes the goal turns earlier tries left queued (a try whose turn finished before its kill queued
 * that goal's next turn): the victim of the next try is `worker --once`, and it must claim the new
 * goal's turn, not an old one. Claimed and finished as a worker would, through the queue's own API.
 */
async function dropLeftoverTurns(ctx: PgGoalContext): Promise<void> {
  const queue = ctx.content.queue();
  for (let i = 0; i < 100; i++) {
    const c = await queue.claim("campaign-janitor", 60_000);
    if (!c) return;
    await queue.finish(c.job.jobId, c.token, "dropped by the campaign (a finished try's next turn)");
  }
  throw new Error("more than 100 jobs left queued between campaign tries");
}

async function newQueuedGoal(ctx: { url: string; root: string }): Promise<string> {
  const id = `campaign-goal-${process.pid}-${++goals}`;
  const src = join(ctx.root, "pg-goal-src");
  const dir = join(src, "goal-csvcol");
  try {
    readFileSync(join(dir, "tasks", "quoted-fields", "task.yaml"));
  } catch {
    mkdirSync(src, { recursive: true });
    cpSync(join(ROOT, "examples", "goal-csvcol"), dir, { recursive: true });
    cpSync(join(ROOT, "examples", "sh-csvcol"), join(src, "sh-csvcol"), { recursive: true });
  }
  const file = join(dir, `${id}.yaml`);
  writeFileSync(
    file,
    `id: ${id}
objective: csvcol reads RFC 4180 quoted fields.
workspace: ../sh-csvcol/repo
builder: oracle
budget: { window: 24h, turns: 20, cost_usd: 5 }
acceptance:
  - { task: tasks/quoted-fields/task.yaml, gates: [heldout-quoted] }
todos:
  - { id: ${TODO}, class: advancement_task, content: Read RFC 4180 quoted fields., task: tasks/quoted-fields/task.yaml }
`,
  );
  const n = await loopgate(["goal", "new", file, "--store", ctx.url, "--json"]).done;
  if (n.code !== 0) throw new Error(`goal new failed (exit ${n.code}): ${n.stderr.slice(-800)}`);
  const s = await loopgate(["goal", "submit", id, "--store", ctx.url, "--json"]).done;
  if (s.code !== 0) throw new Error(`goal submit failed (exit ${s.code}): ${s.stderr.slice(-800)}`);
  return id;
}

let hosts = 0;
const hostDir = (root: string) => {
  const d = join(root, `pg-host-${++hosts}`);
  mkdirSync(d, { recursive: true });
  return d;
};
let ids = 0;
const worker = (url: string, host: string, extra: string[], env: Record<string, string> = {}) =>
  loopgate(
    [
      "worker",
      "--store",
      url,
      ...LEASE,
      "--id",
      `campaign-w${process.pid}-${++ids}`,
      "--work-dir",
      host,
      ...extra,
    ],
    env,
    300_000,
  );

/** The goal's history as the store alone holds it (rebuilt in a fresh folder), as `git log` lines. */
async function storeHistory(ctx: PgGoalContext, goalId: string, revision: string) {
  const host = hostDir(ctx.root);
  await goalRepo(ctx.content, host).tree(goalId, revision);
  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd: join(host, "goals", goalId, "workspace"), encoding: "utf8" }).trim();
  return { git, log: git("log", "--format=%H %(trailers:key=Loopgate-Turn,valueonly)", revision) };
}

/** The facts of turn t1 that must match an uninterrupted worker's, less ids, timings and the goal id. */
async function settled(ctx: PgGoalContext, goalId: string, events: readonly RecordedEvent[]) {
  const s = goalState(events.filter((e) => e.stream === goalStream(goalId)));
  const key = turnOf(goalId).key;
  const t = s.turns[key];
  const todo = s.todos[TODO];
  const rev = t?.writeback?.newRevision;
  const tree = rev ? (await storeHistory(ctx, goalId, rev)).git("rev-parse", `${rev}^{tree}`) : null;
  // The turn's run id is derived from its identity (which holds the goal id): compared by that rule.
  const runId = t?.identity ? turnRunId(t.identity) : null;
  const facts = {
    todo: { status: todo?.status, run_is_the_turns: todo?.completion?.runId === runId },
    turn: {
      work: t?.work,
      base_is_initial: t?.baseRevision === s.workspace?.initial_revision,
      run_is_the_turns: t?.host?.runRef === runId,
      result: t?.result?.kind === "envelope" ? t.result.status : null,
      receipt: t?.receipt?.kind === "run" ? t.receipt.receipt.status : null,
      writeback_tree: tree,
      spend: t?.spend,
      acked: t?.acked ? { mode: t.acked.mode, action: t.acked.hint.action } : null,
      prepared: t?.prepared,
      failure: t?.failure,
      released: t?.released,
    },
    spends: s.spends
      .filter((x) => x.turnId === key)
      .map(({ turns, tokens, costUsd: cost_usd }) => ({ turns, tokens, cost_usd })),
    anomalies: s.anomalies,
  };
  return JSON.parse(JSON.stringify(facts).split(goalId).join("GOAL")) as unknown;
}

/** One uninterrupted goal on one worker: the facts every kill must end as, and the kill points. */
export async function pgGoalSetup(base: Omit<PgGoalContext, "reference">): Promise<PgGoalContext> {
  const ctx = {
    ...base,
    reference: { settled: null, goalPoints: [], runPoints: [], ms: 0 } as GoalReference,
  };
  const goalId = await newQueuedGoal(ctx);
  const before = await ctx.store.readAll();
  const initial = before.filter((e) => e.stream === goalStream(goalId)).length;
  const t0 = Date.now();
  const w = await worker(ctx.url, hostDir(ctx.root), ["--until-idle"]).done;
  const ms = Date.now() - t0;
  if (w.code !== 0) throw new Error(`the reference worker failed (exit ${w.code}): ${w.stderr.slice(-800)}`);
  const all = await ctx.store.readAll();
  const goal = all.filter((e) => e.stream === goalStream(goalId));
  const TURN = turnOf(goalId);
  const t = goalState(goal).turns[TURN.key];
  const history = await storeHistory(ctx, goalId, t?.writeback?.newRevision ?? "");
  const p = turnProblems(turnCounts(goal, trailerCommits(history.log, TURN.key), TURN), TURN);
  const bad = [...p.doubled, ...p.missing, ...p.unwritten];
  if (bad.length) throw new Error(`the reference worker did not settle its turn once: ${bad.join("; ")}`);
  // Kill points: the first turn's appends (the events of one append together are one point).
  const firstAck = goal.findIndex(
    (e) =>
      e.type === "turn_scheduler_acked" &&
      (e.data as { identity?: { turn_instance_id?: string } }).identity?.turn_instance_id === "t1",
  );
  const sameAppend = new Set(["todo_completed", "goal_revision_recorded", "quota_spent"]);
  const counted = goal.filter((e) => e.type !== "turn_lease_heartbeat");
  const ack = goal[firstAck];
  const upTo = counted.findIndex((e) => e.id === ack?.id);
  const goalPoints: number[] = [];
  for (let n = initial + 1; n <= upTo + 1; n++)
    if (!sameAppend.has(counted[n]?.type ?? "")) goalPoints.push(n);
  const firstRun = all.find((e) => e.stream.startsWith("run-") && e.stream.includes("-t1-"))?.stream;
  const runTypes = all
    .filter((e) => e.stream === firstRun && !e.type.startsWith("run_lease_"))
    .map((e) => e.type);
  const withObservation = new Set(["workspace_changed", "finding_recorded"]);
  const runPoints: number[] = [];
  for (let n = 1; n <= runTypes.length; n++) if (!withObservation.has(runTypes[n] ?? "")) runPoints.push(n);
  ctx.reference = { settled: await settled(ctx, goalId, all), goalPoints, runPoints, ms };
  return ctx;
}

export async function runPgGoalCycle(
  ctx: PgGoalContext,
  mode: PgGoalMode,
  plan: PgGoalKillPlan,
): Promise<GoalOutcome> {
  const out: GoalOutcome = {
    killed: false,
    hit: "",
    corrupted: [],
    lost: [],
    blind: [],
    notSettled: [],
    doubled: [],
    unwritten: [],
    settledLikeReference: false,
    mismatch: [],
    inDoubtAtKill: 0,
  };
  await dropLeftoverTurns(ctx);
  const goalId = await newQueuedGoal(ctx);
  const TURN = turnOf(goalId);
  const before = await ctx.store.readAll();
  const known = new Set(before.map((e) => e.stream));
  const env: Record<string, string> =
    plan.how === "goal-fault"
      ? { LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS: String(plan.k) }
      : plan.how === "run-fault"
        ? { LOOPGATE_FAULT_KILL_AFTER_EVENTS: String(plan.k) }
        : plan.how === "upload-fault"
          ? { LOOPGATE_FAULT_KILL_AT_GOAL_UPLOAD: plan.at }
          : {};
  const hostA = hostDir(ctx.root);
  const victim = worker(ctx.url, hostA, ["--once"], env);
  const poll = poller(ctx.store, (before.at(-1)?.position ?? 0) + 1, known, victim);
  if (plan.how === "signal") {
    await Promise.race([victim.saw("· bind:"), victim.done]);
    await sleep(plan.delayMs);
    victim.kill();
  }
  const end = await victim.done;
  await poll.done;
  out.killed = end.signal === "SIGKILL";
  if (!out.killed) return out;
  // A SIGKILLed worker leaves its turn's overlay mounted (nothing ran its unmount): removeTreeSync unmounts first.
  removeTreeSync(hostA);

  const afterKill = await ctx.store.readAll();
  out.corrupted.push(...(await ctx.store.integrity()), ...logProblems(afterKill));
  out.lost.push(...lostAcknowledged(poll.seen, afterKill), ...lostAcknowledged(before, afterKill));
  const goalLen = afterKill
    .filter((e) => e.stream === goalStream(goalId))
    .filter((e) => e.type !== "turn_lease_heartbeat").length;
  const fresh = afterKill.filter((e) => !known.has(e.stream) || !before.some((b) => b.id === e.id));
  const runStreams = [...new Set(fresh.map((e) => e.stream).filter((s) => s.startsWith("run-")))];
  if (plan.how === "goal-fault" && goalLen < plan.k)
    out.lost.push(`${goalStream(goalId)}: ${goalLen} events, but ${plan.k} had been acknowledged`);
  if (plan.how === "run-fault") {
    const short = runStreams.map((s) => shortOfCount(afterKill, s, plan.k));
    if (runStreams.length === 0 || short.every((p) => p.length > 0))
      out.lost.push(
        ...(short.flat().length
          ? short.flat()
          : [`no run stream, though ${plan.k} run appends were acknowledged`]),
      );
  }
  out.inDoubtAtKill = openMutatingCalls(fresh).length;
  const lastGoal = fresh.filter((e) => e.stream === goalStream(goalId)).at(-1)?.type ?? "none";
  const runEvents = fresh.filter((e) => e.stream.startsWith("run-"));
  out.hit = `goal stream ${goalLen} events (last ${lastGoal}); run ${runEvents.length ? `${runEvents.length} events, last ${runEvents.at(-1)?.type}` : "not started"}`;

  // Takeover: one or two workers in fresh folders, until the queue is empty.
  const takers = Array.from({ length: mode === "2 workers" ? 2 : 1 }, () =>
    worker(ctx.url, hostDir(ctx.root), ["--until-idle"]),
  );
  for (const r of await Promise.all(takers.map((p) => p.done)))
    if (r.code !== 0)
      out.notSettled.push(`taking-over worker exit ${r.code ?? r.signal}: ${r.stderr.slice(-400)}`);
  const final = await ctx.store.readAll();
  out.corrupted.push(...(await ctx.store.integrity()), ...logProblems(final));
  out.lost.push(...lostAcknowledged(afterKill, final));
  out.blind.push(...blindReruns(final.filter((e) => !known.has(e.stream))));
  const goalEvents = final.filter((e) => e.stream === goalStream(goalId));
  const rev = goalState(goalEvents).turns[TURN.key]?.writeback?.newRevision;
  let commits: string[] = [];
  if (rev) {
    try {
      commits = trailerCommits((await storeHistory(ctx, goalId, rev)).log, TURN.key);
    } catch (e) {
      out.notSettled.push(`the store does not hold the turn's revision ${rev}: ${(e as Error).message}`);
    }
  }
  const p = turnProblems(turnCounts(goalEvents, commits, TURN), TURN);
  out.doubled.push(...p.doubled);
  out.unwritten.push(...p.unwritten);
  out.notSettled.push(...p.missing);
  const facts = await settled(ctx, goalId, final);
  out.settledLikeReference = isDeepStrictEqual(facts, ctx.reference.settled);
  if (!out.settledLikeReference)
    out.mismatch.push(
      `turn ${TURN.key} settled unlike the uninterrupted worker: ${JSON.stringify(facts).slice(0, 400)}`,
    );
  return out;
}
