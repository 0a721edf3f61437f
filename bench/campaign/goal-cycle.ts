// One goal-turn kill of the campaign: `loopgate goal tick` on a copy of the example goal, killed at a
// goal-stream append, inside the todo's run or by a SIGKILL after a delay; the store's check and the log
// invariants over every stream; `goal tick` again to settle; then the turn's facts each exactly once and
// the turn settled as an uninterrupted tick settles it (less ids and timings).
import { execFileSync } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { RecordedEvent } from "../../src/core/events/loopgate-event.js";
import { goalState } from "../../src/runner/goal/goal-engine.js";
import { goalStream } from "../../src/runner/goal/goal-store.js";
import { poller } from "./cycle.js";
import { type TurnRef, trailerCommits, turnCounts, turnProblems } from "./goal-checks.js";
import { blindReruns, logProblems, lostAcknowledged, openMutatingCalls, shortOfCount } from "./log-checks.js";
import { loopgate, ROOT, sleep } from "./proc.js";
import { sqliteStore } from "./store-checks.js";

export const GOAL = "csvcol-rfc4180";
const GOAL_FILE = join(ROOT, "examples", "goal-csvcol", "goal.yaml");
/** The first turn of the example: the oracle agent on the first todo. */
export const TURN: TurnRef = { key: `${GOAL}/oracle/t1`, instance: "t1", todo: "todo_quoted_fields" };

export type GoalKillPlan =
  | { how: "goal-fault"; k: number }
  | { how: "run-fault"; k: number }
  | { how: "signal"; delayMs: number };

export interface GoalReference {
  settled: unknown;
  /** Goal-stream sizes at which an append ends (LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS values). */
  goalPoints: number[];
  /** Run-event counts at which an append ends (LOOPGATE_FAULT_KILL_AFTER_EVENTS values). */
  runPoints: number[];
  ms: number;
}

export interface GoalContext {
  template: string;
  reference: GoalReference;
  root: string;
}

export interface GoalOutcome {
  killed: boolean;
  hit: string;
  corrupted: string[];
  lost: string[];
  blind: string[];
  notSettled: string[];
  doubled: string[];
  unwritten: string[];
  settledLikeReference: boolean;
  /** How the settled turn differs from the uninterrupted one, when it does. */
  mismatch: string[];
  inDoubtAtKill: number;
}

const git = (store: string, ...args: string[]) =>
  execFileSync("git", args, { cwd: join(store, "goals", GOAL, "workspace"), encoding: "utf8" }).trim();

const turnCommits = (store: string) =>
  trailerCommits(git(store, "log", "--format=%H %(trailers:key=Loopgate-Turn,valueonly)"), TURN.key);

const goalTick = (store: string, env: Record<string, string> = {}) =>
  loopgate(["goal", "tick", GOAL, "--store", store, "--json"], env);

/** What must be the same after any crash and settling tick: the facts of the turn, not timestamps or ids. */
function settled(store: string, events: readonly RecordedEvent[]): unknown {
  const s = goalState(events.filter((e) => e.stream === goalStream(GOAL)));
  const t = s.turns[TURN.key];
  const todo = s.todos[TURN.todo];
  const tree = (rev: string | undefined) => (rev ? git(store, "rev-parse", `${rev}^{tree}`) : null);
  return {
    todo: { status: todo?.status, run: todo?.completion?.runId },
    turn: {
      work: t?.work,
      base_is_initial: t?.baseRevision === s.workspace?.initial_revision,
      run: t?.host?.runRef,
      result: t?.result?.kind === "envelope" ? t.result.status : null,
      receipt: t?.receipt?.kind === "run" ? t.receipt.receipt.status : null,
      writeback_tree: tree(t?.writeback?.newRevision),
      spend: t?.spend,
      acked: t?.acked ? { mode: t.acked.mode, action: t.acked.hint.action } : null,
      prepared: t?.prepared,
      failure: t?.failure,
      released: t?.released,
    },
    spends: s.spends
      .filter((x) => x.turnId === TURN.key)
      .map(({ turns, tokens, costUsd: cost_usd }) => ({ turns, tokens, cost_usd })),
    anomalies: s.anomalies,
  };
}

let copies = 0;
function copyOf(template: string, root: string): string {
  const dir = join(root, `goal-${++copies}`);
  cpSync(template, dir, { recursive: true, verbatimSymlinks: true });
  return dir;
}

/** The example goal created once, and one uninterrupted tick of a copy: what every kill must end as. */
export async function goalSetup(root: string): Promise<GoalContext> {
  const template = join(root, "goal-template");
  const r = await loopgate(["goal", "new", GOAL_FILE, "--store", template, "--json"]).done;
  if (r.code !== 0) throw new Error(`goal new failed (exit ${r.code}): ${r.stderr.slice(-800)}`);
  const dir = copyOf(template, root);
  const store = sqliteStore(dir);
  try {
    const initial = (await store.readAll()).filter((e) => e.stream === goalStream(GOAL)).length;
    const t0 = Date.now();
    const t = await goalTick(dir).done;
    const ms = Date.now() - t0;
    if (t.code !== 0) throw new Error(`the reference tick failed (exit ${t.code}): ${t.stderr.slice(-800)}`);
    const all = await store.readAll();
    const problems = turnProblems(
      turnCounts(
        all.filter((e) => e.stream === goalStream(GOAL)),
        turnCommits(dir),
        TURN,
      ),
      TURN,
    );
    const bad = [...problems.doubled, ...problems.missing, ...problems.unwritten];
    if (bad.length) throw new Error(`the reference tick did not settle its turn once: ${bad.join("; ")}`);
    const goal = all.filter((e) => e.stream === goalStream(GOAL));
    // An append's last event is a kill point; the events written with it in one append are not.
    const sameAppend = new Set(["todo_completed", "goal_revision_recorded", "quota_spent"]);
    const goalPoints: number[] = [];
    for (let n = initial + 1; n < goal.length; n++)
      if (!sameAppend.has(goal[n]?.type ?? "")) goalPoints.push(n);
    const runTypes = all
      .filter((e) => e.stream.startsWith("run-") && !e.type.startsWith("run_lease_"))
      .map((e) => e.type);
    // The after-builder observation is appended with its changes and findings: only its last is a point.
    const withObservation = new Set(["workspace_changed", "finding_recorded"]);
    const runPoints: number[] = [];
    for (let n = 1; n <= runTypes.length; n++) if (!withObservation.has(runTypes[n] ?? "")) runPoints.push(n);
    return { template, root, reference: { settled: settled(dir, all), goalPoints, runPoints, ms } };
  } finally {
    await store.close();
  }
}

export async function runGoalCycle(ctx: GoalContext, plan: GoalKillPlan): Promise<GoalOutcome> {
  const dir = copyOf(ctx.template, ctx.root);
  const store = sqliteStore(dir);
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
  try {
    const before = await store.readAll();
    const known = new Set(before.map((e) => e.stream));
    const env: Record<string, string> =
      plan.how === "goal-fault"
        ? { LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS: String(plan.k) }
        : plan.how === "run-fault"
          ? { LOOPGATE_FAULT_KILL_AFTER_EVENTS: String(plan.k) }
          : {};
    const victim = goalTick(dir, env);
    const poll = poller(store, (before.at(-1)?.position ?? 0) + 1, known, victim);
    if (plan.how === "signal") {
      await Promise.race([victim.saw("· bind:"), victim.done]);
      await sleep(plan.delayMs);
      victim.kill();
    }
    const end = await victim.done;
    await poll.done;
    out.killed = end.signal === "SIGKILL";
    if (!out.killed) return out;

    // Right after the kill: the store's check, the invariants over every stream, nothing acknowledged lost.
    const afterKill = await store.readAll();
    out.corrupted.push(...(await store.integrity()), ...logProblems(afterKill));
    out.lost.push(...lostAcknowledged(poll.seen, afterKill), ...lostAcknowledged(before, afterKill));
    const goalLen = afterKill.filter((e) => e.stream === goalStream(GOAL)).length;
    const runStreams = [...new Set(afterKill.map((e) => e.stream).filter((s) => s.startsWith("run-")))];
    if (plan.how === "goal-fault" && goalLen < plan.k)
      out.lost.push(`${goalStream(GOAL)}: ${goalLen} events, but ${plan.k} had been acknowledged`);
    if (plan.how === "run-fault") {
      const short = runStreams.map((s) => shortOfCount(afterKill, s, plan.k));
      if (runStreams.length === 0 || short.every((p) => p.length > 0))
        out.lost.push(
          ...(short.flat().length
            ? short.flat()
            : [`no run stream, though ${plan.k} run appends were acknowledged`]),
        );
    }
    const fresh = afterKill.filter((e) => !before.some((b) => b.id === e.id));
    out.inDoubtAtKill = openMutatingCalls(fresh).length;
    const lastGoal = fresh.filter((e) => e.stream === goalStream(GOAL)).at(-1)?.type ?? "none";
    const runEvents = fresh.filter((e) => e.stream.startsWith("run-"));
    out.hit = `goal stream ${goalLen} events (last ${lastGoal}); run ${runEvents.length ? `${runEvents.length} events, last ${runEvents.at(-1)?.type}` : "not started"}`;

    // Settle: the next tick resumes the turn (or, if the kill came after its last fact, takes the next todo).
    const r = await goalTick(dir).done;
    if (r.code !== 0) out.notSettled.push(`settling tick exit ${r.code}: ${r.stderr.slice(-400)}`);
    const final = await store.readAll();
    out.corrupted.push(...(await store.integrity()), ...logProblems(final));
    out.lost.push(...lostAcknowledged(afterKill, final));
    out.blind.push(...blindReruns(final.filter((e) => !known.has(e.stream))));
    const p = turnProblems(
      turnCounts(
        final.filter((e) => e.stream === goalStream(GOAL)),
        turnCommits(dir),
        TURN,
      ),
      TURN,
    );
    out.doubled.push(...p.doubled);
    out.unwritten.push(...p.unwritten);
    out.notSettled.push(...p.missing);
    const dirty = git(dir, "status", "--porcelain");
    if (dirty) out.notSettled.push(`goal workspace left dirty: ${dirty.slice(0, 200)}`);
    out.settledLikeReference = isDeepStrictEqual(settled(dir, final), ctx.reference.settled);
    if (!out.settledLikeReference)
      out.mismatch.push(
        `turn ${TURN.key} settled unlike the uninterrupted tick: ${JSON.stringify(settled(dir, final)).slice(0, 400)}`,
      );
    return out;
  } finally {
    await store.close();
  }
}
