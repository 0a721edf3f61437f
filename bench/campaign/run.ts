// The kill campaign (issue 14): at least 100 SIGKILLs at seeded random points across built-in-agent and
// external-builder runs, on SQLite and Postgres, with one and with several workers; after each, the
// store's integrity check and the log's invariants, then resume or worker takeover to the end.
//   npm run bench:campaign -- [--seed N] [--kills N] [--stores sqlite,postgres] [--out FILE] [--keep]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { PostgresEventStore } from "../../src/store/postgres-event-store.js";
import {
  type CampaignContext,
  type Cell,
  type KillPlan,
  type Mode,
  runCycle,
  type StoreKind,
} from "./cycle.js";
import { comparable } from "./envelope.js";
import { prng } from "./prng.js";
import { killAll, loopgate } from "./proc.js";
import { add, cellName, clean, emptyTally, type Tally, table } from "./report.js";
import { freshDatabase, prepareTask, reference } from "./setup.js";
import { postgresStore, sqliteStore } from "./store-checks.js";

const { values } = parseArgs({
  options: {
    seed: { type: "string" },
    kills: { type: "string", default: "104" },
    stores: { type: "string", default: "sqlite,postgres" },
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

const MODES: Record<StoreKind, Mode[]> = {
  // A SQLite file has no queue: its run is driven by `loopgate run`, then `loopgate resume`.
  sqlite: ["run+resume"],
  postgres: ["run+resume", "1 worker", "2 workers"],
};
const cells: Cell[] = stores.flatMap((store) =>
  MODES[store].flatMap((mode) =>
    (["agent", "builder"] as const).map((builder) => ({ store, builder, mode })),
  ),
);

async function goalTurnsCovered(): Promise<boolean> {
  const r = await loopgate(["goal", "--help"]).done;
  return /\btick\b/.test(r.stdout + r.stderr);
}

async function main(): Promise<number> {
  const started = new Date();
  const rand = prng(seed);
  console.log(`kill campaign · seed ${seed} · ${kills} kills · cells: ${cells.map(cellName).join(", ")}`);
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
      rmSync(root, { recursive: true, force: true });
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
    for (const kind of ["agent", "builder"] as const) {
      ctx.reference[kind] = await reference(sqlite, task, builderArgs[kind], comparable);
      const r = ctx.reference[kind];
      console.log(`reference ${kind} run (uninterrupted, SQLite): ${r.ownEvents} events, ${r.ms} ms`);
    }
    if (stores.includes("postgres")) {
      db = await freshDatabase();
      ctx.stores.postgres = await postgresStore(db.url);
      queueStore = await PostgresEventStore.open(db.url, { maxConnections: 1 });
      const queue = queueStore.queue();
      ctx.jobs = async (ids) => (await queue.list()).filter((j) => ids.includes(j.jobId));
      console.log(`postgres: fresh database ${db.url}`);
    }
    const tallies = new Map<string, Tally>(cells.map((c) => [cellName(c), emptyTally()]));
    const problems: string[] = [];
    const notBoundary = { agent: new Set<number>(), builder: new Set<number>() };
    const misses = { fault: 0, signal: 0 };
    let delivered = 0;
    let tries = 0;
    while (delivered < kills) {
      const cell = cells[delivered % cells.length] as Cell;
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
    const goals = await goalTurnsCovered();
    const minutes = ((Date.now() - started.getTime()) / 60_000).toFixed(1);
    const report = [
      `# Kill campaign`,
      "",
      `- date: ${started.toISOString()}`,
      `- seed: ${seed} (replay: \`npm run bench:campaign -- --seed ${seed} --kills ${kills} --stores ${stores.join(",")}\`)`,
      `- kills delivered: ${total.kills} in ${tries} tries (${misses.signal} signal kills came after the run had finished; ${misses.fault} fault points fell inside a batch append: drawn again)`,
      `- wall time: ${minutes} min on ${process.platform} ${process.arch}, Node ${process.version}`,
      `- goal turns: ${goals ? "covered" : "not covered (no `loopgate goal tick` in this build)"}`,
      "",
      table(rows),
      "",
      clean(total)
        ? "Every must-be-zero column is 0 and every resumed envelope equals the uninterrupted run's."
        : `PROBLEMS:\n${problems.map((p) => `- ${p}`).join("\n")}`,
      "",
    ].join("\n");
    console.log(`\n${report}`);
    if (values.out) writeFileSync(values.out, report);
    return clean(total) ? 0 : 1;
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
