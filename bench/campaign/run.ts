// The kill campaign: at least 100 SIGKILLs at seeded random points across built-in-agent and
// external-builder runs and goal turns, on SQLite and Postgres, with one and with several workers; after
// each, the store's integrity check and the log's invariants, then resume, worker takeover or the next
// goal tick to the end.
//   npm run bench:campaign -- [--seed N] [--kills N] [--stores sqlite,postgres] [--cells runs,goal]
//                             [--out FILE] [--keep]
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { removeTreeSync } from "../../src/workspace/remove-tree.js";
import {
  type CampaignContext,
  type Cell,
  type KillPlan,
  type Mode,
  runCycle,
  type StoreKind,
} from "./cycle.js";
import { comparable } from "./envelope.js";
import { type GoalContext, type GoalKillPlan, goalSetup, runGoalCycle } from "./goal-cycle.js";
import {
  type PgGoalContext,
  type PgGoalKillPlan,
  type PgGoalMode,
  pgGoalSetup,
  runPgGoalCycle,
} from "./goal-pg-cycle.js";
import {
  addGoal,
  emptyGoalTally,
  GOAL_CELL,
  type GoalTally,
  goalClean,
  goalTable,
  PG_GOAL_CELLS,
} from "./goal-report.js";
import { prng } from "./prng.js";
import { killAll } from "./proc.js";
import { add, cellName, clean, emptyTally, type Tally, table } from "./report.js";
import { freshDatabase, prepareTask, reference } from "./setup.js";
import { postgresStore, sqliteStore } from "./store-checks.js";

const { values } = parseArgs({
  options: {
    seed: { type: "string" },
    kills: { type: "string", default: "104" },
    stores: { type: "string", default: "sqlite,postgres" },
    cells: { type: "string", default: "runs,goal" },
    out: { type: "string" },
    keep: { type: "boolean", default: false },
  },
});
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const kills = Number(values.kills);
const stores = (values.stores ?? "").split(",").filter(Boolean) as StoreKind[];
if (!Number.isInteger(seed) || seed < 0)
  throw new Error(`--seed: expected a non-negative integer, got ${values.seed}`);
if (!Number.isInteger(kills) || kills < 1)
  throw new Error(`--kills: expected a positive integer, got ${values.kills}`);
for (const s of stores)
  if (s !== "sqlite" && s !== "postgres") throw new Error(`--stores: unknown store ${s}`);
const kinds = (values.cells ?? "").split(",").filter(Boolean);
for (const c of kinds)
  if (c !== "runs" && c !== "goal") throw new Error(`--cells: unknown cells ${c} (runs, goal)`);
if (kinds.length === 0) throw new Error("--cells: name runs, goal or both");
// Goal cells on each store named: `goal tick` then `goal tick` on SQLite; on PostgreSQL a killed
// `worker --once`, then one or two workers that take the turn over.
const withGoal = kinds.includes("goal") && stores.includes("sqlite");
const withPgGoal = kinds.includes("goal") && stores.includes("postgres");
const goalCells: string[] = [...(withGoal ? [GOAL_CELL] : []), ...(withPgGoal ? PG_GOAL_CELLS : [])];

const MODES: Record<StoreKind, Mode[]> = {
  // A SQLite file has no queue: its run is driven by `loopgate run`, then `loopgate resume`.
  sqlite: ["run+resume"],
  postgres: ["run+resume", "1 worker", "2 workers"],
};
const cells: Cell[] = !kinds.includes("runs")
  ? []
  : stores.flatMap((store) =>
      MODES[store].flatMap((mode) =>
        (["agent", "builder"] as const).map((builder) => ({ store, builder, mode })),
      ),
    );

/** One goal-turn kill plan: a goal-stream append, an event inside the todo's run, or a delayed SIGKILL. */
function goalPlan(rand: ReturnType<typeof prng>, g: GoalContext, skip: Set<string>): GoalKillPlan {
  const { goalPoints, runPoints, ms } = g.reference;
  const how = rand.pick(["goal-fault", "run-fault", "signal"] as const);
  if (how === "signal") return { how, delayMs: rand.int(0, Math.floor(ms * 0.5)) };
  const points = (how === "goal-fault" ? goalPoints : runPoints).filter((k) => !skip.has(`${how}:${k}`));
  const from = points.length ? points : how === "goal-fault" ? goalPoints : runPoints;
  return { how, k: from[rand.int(0, from.length - 1)] as number };
}

/** A Postgres goal-turn kill plan: as goalPlan, or around the upload of the writeback's git objects. */
function pgGoalPlan(rand: ReturnType<typeof prng>, g: PgGoalContext, skip: Set<string>): PgGoalKillPlan {
  const how = rand.pick(["goal-fault", "run-fault", "signal", "upload-fault"] as const);
  if (how === "upload-fault") return { how, at: rand.pick(["before", "after"] as const) };
  const { goalPoints, runPoints, ms } = g.reference;
  if (how === "signal") return { how, delayMs: rand.int(0, Math.floor(ms * 0.3)) };
  const points = (how === "goal-fault" ? goalPoints : runPoints).filter((k) => !skip.has(`${how}:${k}`));
  const from = points.length ? points : how === "goal-fault" ? goalPoints : runPoints;
  return { how, k: from[rand.int(0, from.length - 1)] as number };
}

const goalPoint = (p: GoalKillPlan | PgGoalKillPlan) =>
  p.how === "goal-fault"
    ? `LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS=${p.k}`
    : p.how === "run-fault"
      ? `LOOPGATE_FAULT_KILL_AFTER_EVENTS=${p.k}`
      : p.how === "upload-fault"
        ? `LOOPGATE_FAULT_KILL_AT_GOAL_UPLOAD=${p.at}`
        : `SIGKILL ${p.delayMs} ms after the turn's bind`;

async function main(): Promise<number> {
  const started = new Date();
  const rand = prng(seed);
  const names = [...cells.map(cellName), ...goalCells];
  console.log(`kill campaign · seed ${seed} · ${kills} kills · cells: ${names.join(", ")}`);
  const root = mkdtempSync(join(tmpdir(), "loopgate-campaign-"));
  const { task, builderArgs } = prepareTask(root);
  const ctx: CampaignContext = {
    stores: {},
    task,
    builderArgs,
    reference: {} as CampaignContext["reference"],
  };
  const sqlite = sqliteStore(join(root, "sqlite-store"));
  let db: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  let queueStore: PostgresEventStore | undefined;
  const cleanup = async () => {
    await sqlite.close();
    await ctx.stores.postgres?.close();
    await queueStore?.close();
    if (!values.keep) {
      await db?.drop();
      removeTreeSync(root); // unmounts what killed runs left mounted (overlay workspaces) first
    } else console.log(`kept ${root}${db ? ` and ${db.url}` : ""}`);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => {
      console.log(`\n${signal}: stopping the campaign, killing what it started`);
      killAll();
      cleanup().finally(() => process.exit(130));
    });
  try {
    ctx.stores.sqlite = sqlite;
    for (const kind of cells.length ? (["agent", "builder"] as const) : []) {
      ctx.reference[kind] = await reference(sqlite, task, builderArgs[kind], comparable);
      const r = ctx.reference[kind];
      console.log(`reference ${kind} run (uninterrupted, SQLite): ${r.ownEvents} events, ${r.ms} ms`);
    }
    let goal: GoalContext | undefined;
    if (withGoal) {
      goal = await goalSetup(root);
      const g = goal.reference;
      console.log(
        `reference goal tick (uninterrupted, SQLite): ${g.goalPoints.length} goal-stream and ${g.runPoints.length} run kill points, ${g.ms} ms`,
      );
    }
    let pgGoal: PgGoalContext | undefined;
    if (stores.includes("postgres") && (cells.length || withPgGoal)) {
      db = await freshDatabase();
      ctx.stores.postgres = await postgresStore(db.url);
      queueStore = await PostgresEventStore.open(db.url, { maxConnections: 1 });
      const queue = queueStore.queue();
      ctx.jobs = async (ids) => (await queue.list()).filter((j) => ids.includes(j.jobId));
      console.log(`postgres: fresh database ${db.url}`);
      if (withPgGoal) {
        pgGoal = await pgGoalSetup({
          url: db.url,
          store: ctx.stores.postgres,
          content: queueStore,
          root,
        });
        const g = pgGoal.reference;
        console.log(
          `reference goal on one worker (uninterrupted, Postgres): ${g.goalPoints.length} goal-stream and ${g.runPoints.length} run kill points, ${g.ms} ms`,
        );
      }
    }
    const tallies = new Map<string, Tally>(cells.map((c) => [cellName(c), emptyTally()]));
    const problems: string[] = [];
    const notBoundary = { agent: new Set<number>(), builder: new Set<number>() };
    const misses = { fault: 0, signal: 0 };
    const goalTallies = new Map<string, GoalTally>(goalCells.map((c) => [c, emptyGoalTally()]));
    const goalTally = goalTallies.get(GOAL_CELL) ?? emptyGoalTally();
    const goalSkip = new Set<string>();
    const pgGoalSkip = new Set<string>();
    const goalMisses = { fault: 0, signal: 0 };
    let delivered = 0;
    let tries = 0;
    while (delivered < kills) {
      const slot = delivered % names.length;
      const pgCell = slot >= cells.length ? goalCells[slot - cells.length] : undefined;
      if (pgGoal && pgCell && pgCell !== GOAL_CELL) {
        const mode: PgGoalMode = pgCell === PG_GOAL_CELLS[1] ? "2 workers" : "1 worker";
        const plan = pgGoalPlan(rand, pgGoal, pgGoalSkip);
        const t0 = Date.now();
        tries++;
        const o = await runPgGoalCycle(pgGoal, mode, plan);
        const secs = ((Date.now() - t0) / 1000).toFixed(1);
        if (!o.killed) {
          if (plan.how === "goal-fault" || plan.how === "run-fault") pgGoalSkip.add(`${plan.how}:${plan.k}`);
          goalMisses[plan.how === "signal" ? "signal" : "fault"]++;
          console.log(
            `  try ${tries} [${pgCell}] ${goalPoint(plan)}: no kill (${plan.how === "signal" ? "the turn finished first" : "no such kill point in this turn"}; ${secs} s), drawing again`,
          );
          continue;
        }
        delivered++;
        addGoal(goalTallies.get(pgCell) as GoalTally, plan.how, o);
        const bad = [
          ...o.corrupted,
          ...o.lost,
          ...o.blind,
          ...o.notSettled,
          ...o.doubled,
          ...o.unwritten,
          ...o.mismatch,
        ];
        problems.push(...bad.map((p) => `kill ${delivered} (${pgCell}, ${goalPoint(plan)}): ${p}`));
        console.log(
          `kill ${delivered}/${kills} [${pgCell}] ${goalPoint(plan)} → hit ${o.hit}` +
            `${o.inDoubtAtKill ? ` · ${o.inDoubtAtKill} call(s) in doubt` : ""} · settled ${o.settledLikeReference ? "like" : "UNLIKE"} uninterrupted` +
            `${bad.length ? ` · ${bad.length} PROBLEM(S)` : " · ok"} (${secs} s)`,
        );
        for (const p of bad) console.log(`    ${p}`);
        continue;
      }
      if (goal && pgCell === GOAL_CELL) {
        const plan = goalPlan(rand, goal, goalSkip);
        const t0 = Date.now();
        tries++;
        const o = await runGoalCycle(goal, plan);
        const secs = ((Date.now() - t0) / 1000).toFixed(1);
        if (!o.killed) {
          if (plan.how !== "signal") goalSkip.add(`${plan.how}:${plan.k}`);
          goalMisses[plan.how === "signal" ? "signal" : "fault"]++;
          console.log(
            `  try ${tries} [${GOAL_CELL}] ${goalPoint(plan)}: no kill (${plan.how === "signal" ? "the tick finished first" : "no such kill point in this tick; not drawn again"}; ${secs} s), drawing again`,
          );
          continue;
        }
        delivered++;
        addGoal(goalTally, plan.how, o);
        const bad = [
          ...o.corrupted,
          ...o.lost,
          ...o.blind,
          ...o.notSettled,
          ...o.doubled,
          ...o.unwritten,
          ...o.mismatch,
        ];
        problems.push(...bad.map((p) => `kill ${delivered} (${GOAL_CELL}, ${goalPoint(plan)}): ${p}`));
        console.log(
          `kill ${delivered}/${kills} [${GOAL_CELL}] ${goalPoint(plan)} → hit ${o.hit}` +
            `${o.inDoubtAtKill ? ` · ${o.inDoubtAtKill} call(s) in doubt` : ""} · settled ${o.settledLikeReference ? "like" : "UNLIKE"} uninterrupted` +
            `${bad.length ? ` · ${bad.length} PROBLEM(S)` : " · ok"} (${secs} s)`,
        );
        for (const p of bad) console.log(`    ${p}`);
        continue;
      }
      const cell = cells[delivered % names.length] as Cell;
      const ref = ctx.reference[cell.builder];
      const how = rand.pick(["fault", "signal"] as const);
      const variant = rand.pick(["processes", "concurrency"] as const);
      // A k inside a batch appended at once (e.g. builder_finished with its claim) is no kill point: the
      // hook sees the count jump over it. Such a k, once found, is not drawn again for that builder.
      const skip = notBoundary[cell.builder];
      let k = rand.int(1, ref.ownEvents - 1);
      while (skip.has(k) && skip.size < ref.ownEvents - 1) k = rand.int(1, ref.ownEvents - 1);
      const plan: KillPlan =
        how === "fault"
          ? { how, k, variant }
          : { how, delayMs: rand.int(0, Math.floor(ref.ms * 0.7)), variant };
      const point =
        plan.how === "fault"
          ? `LOOPGATE_FAULT_KILL_AFTER_EVENTS=${plan.k}`
          : `SIGKILL ${plan.delayMs} ms after the ${cell.mode === "run+resume" ? "run's first event" : "first claim"}`;
      const how2 =
        cell.mode === "2 workers"
          ? ` (${variant === "processes" ? "2 worker processes" : "1 worker, --concurrency 2"})`
          : "";
      const t0 = Date.now();
      tries++;
      const o = await runCycle(ctx, cell, plan, tries);
      const secs = ((Date.now() - t0) / 1000).toFixed(1);
      if (!o.killed) {
        if (plan.how === "fault") skip.add(plan.k);
        const why =
          plan.how === "fault"
            ? `event ${plan.k} was appended in one batch with the next, so the hook never saw it; not drawn again`
            : "the run finished first";
        console.log(
          `  try ${tries} [${cellName(cell)}${how2}] ${point}: no kill (${why}; ${secs} s), drawing again`,
        );
        misses[plan.how]++;
        continue;
      }
      delivered++;
      const tally = tallies.get(cellName(cell)) as Tally;
      add(tally, plan.how, o);
      const bad = [...o.corrupted, ...o.lost, ...o.blind, ...o.notResumable, ...o.mismatches];
      problems.push(...bad.map((p) => `kill ${delivered} (${cellName(cell)}, ${point}): ${p}`));
      console.log(
        `kill ${delivered}/${kills} [${cellName(cell)}${how2}] ${point} → hit ${o.hit}` +
          `${o.inDoubtAtKill ? ` · ${o.inDoubtAtKill} call(s) in doubt` : ""} · resumed ${o.equal}/${o.resumed} equal` +
          `${bad.length ? ` · ${bad.length} PROBLEM(S)` : " · ok"} (${secs} s)`,
      );
      for (const p of bad) console.log(`    ${p}`);
    }
    const rows = [...tallies.entries()];
    const total = emptyTally();
    for (const [, t] of rows) for (const k of Object.keys(total) as (keyof Tally)[]) total[k] += t[k];
    const goalRows = [...goalTallies.entries()];
    const goalKills = goalRows.reduce((n, [, t]) => n + t.kills, 0);
    const ok = (cells.length === 0 || clean(total)) && goalRows.every(([, t]) => goalClean(t));
    const minutes = ((Date.now() - started.getTime()) / 60_000).toFixed(1);
    const report = [
      `# Kill campaign`,
      "",
      `- date: ${started.toISOString()}`,
      `- seed: ${seed} (replay: \`npm run bench:campaign -- --seed ${seed} --kills ${kills} --stores ${stores.join(",")} --cells ${kinds.join(",")}\`)`,
      `- kills delivered: ${total.kills + goalKills} in ${tries} tries (${[
        ...(cells.length
          ? [
              `${misses.signal} signal kills came after the run had finished; ${misses.fault} fault points fell inside a batch append`,
            ]
          : []),
        ...(goalCells.length
          ? [
              `goal turns: ${goalMisses.signal} signal kills came after the tick had finished, ${goalMisses.fault} fault points not reached`,
            ]
          : []),
      ].join("; ")}: drawn again)`,
      `- wall time: ${minutes} min on ${process.platform} ${process.arch}, Node ${process.version}`,
      `- goal turns: ${
        goalCells.length
          ? [
              ...(goal ? [`${goalTally.kills} kills of \`loopgate goal tick\` on SQLite`] : []),
              ...(pgGoal
                ? [
                    `${goalRows.filter(([c]) => c !== GOAL_CELL).reduce((n, [, t]) => n + t.kills, 0)} kills of \`loopgate worker\` running goal turns on Postgres (taken over by 1 or 2 workers in fresh folders)`,
                  ]
                : []),
            ].join("; ")
          : "not in this campaign (--cells)"
      }`,
      "",
      ...(cells.length ? [table(rows), ""] : []),
      ...(goalRows.length ? [goalTable(goalRows), ""] : []),
      ok
        ? `Every must-be-zero column is 0 and every resumed ${goalCells.length ? "run or turn ends as its uninterrupted one" : "envelope equals the uninterrupted run's"}.`
        : `PROBLEMS:\n${problems.map((p) => `- ${p}`).join("\n")}`,
      "",
    ].join("\n");
    console.log(`\n${report}`);
    if (values.out) writeFileSync(values.out, report);
    return ok ? 0 : 1;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`kill campaign failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(2);
  },
);
