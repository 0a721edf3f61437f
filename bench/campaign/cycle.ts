// One kill of the campaign: start the victim (a run or a worker), kill it at the planned point, check the
// log, take the run over to its end, check the log again and compare every interrupted run's envelope
// with the uninterrupted run's.
import { dirname, join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { RecordedEvent } from "../../src/core/events/loopgate-event.js";
import { comparable, envelopeOf, runIdOf } from "./envelope.js";
import { blindReruns, logProblems, lostAcknowledged, openMutatingCalls, shortOfCount } from "./log-checks.js";
import { type Finished, loopgate, type Proc, sleep } from "./proc.js";
import type { CampaignStore } from "./store-checks.js";

export type StoreKind = "sqlite" | "postgres";
export type BuilderKind = "agent" | "builder";
export type Mode = "run+resume" | "1 worker" | "2 workers";
export interface Cell {
  store: StoreKind;
  builder: BuilderKind;
  mode: Mode;
}
/** How the victim dies; `variant` says how "2 workers" share the jobs (two processes, or one with --concurrency 2). */
export type KillPlan = ({ how: "fault"; k: number } | { how: "signal"; delayMs: number }) & {
  variant?: "processes" | "concurrency";
};

/** An uninterrupted run of one builder kind: what every resumed run must end as. */
export interface Reference {
  envelope: unknown;
  /** The run's own events (lease events not counted, as the fault hook does not count them). */
  ownEvents: number;
  ms: number;
}

export interface CampaignContext {
  stores: Partial<Record<StoreKind, CampaignStore>>;
  /** Unfinished-or-not state of the cycle's jobs (Postgres only). */
  jobs?: (
    ids: readonly string[],
  ) => Promise<{ jobId: string; state: string; runId: string | null; attempts: number }[]>;
  task: string;
  builderArgs: Record<BuilderKind, string[]>;
  reference: Record<BuilderKind, Reference>;
}

export interface CycleOutcome {
  killed: boolean;
  /** What the kill hit, for the printed line. */
  hit: string;
  corrupted: string[];
  lost: string[];
  blind: string[];
  notResumable: string[];
  resumed: number;
  equal: number;
  mismatches: string[];
  inDoubtAtKill: number;
}

const LEASE = ["--lease", "1s"];

/** Polls the log while the victim lives; every event it reads is acknowledged (it was committed). */
export function poller(store: CampaignStore, from: number, known: ReadonlySet<string>, victim: Proc) {
  const seen: RecordedEvent[] = [];
  let cursor = from;
  let firstRun: () => void = () => {};
  const firstRunEvent = new Promise<void>((r) => {
    firstRun = r;
  });
  const done = (async () => {
    for (;;) {
      const last = victim.exited();
      const got = await store.readAll(cursor).catch(() => []);
      seen.push(...got);
      if (got.length) cursor = (got.at(-1)?.position ?? cursor) + 1;
      if (seen.some((e) => e.stream.startsWith("run-") && !known.has(e.stream))) firstRun();
      if (last) return;
      await sleep(50);
    }
  })();
  return { seen, firstRunEvent, done };
}

async function submit(ctx: CampaignContext, cell: Cell, url: string): Promise<string> {
  const r = await loopgate(["submit", ctx.task, ...ctx.builderArgs[cell.builder], "--store", url, "--json"])
    .done;
  if (r.code !== 0) throw new Error(`submit failed (exit ${r.code}): ${r.stderr}`);
  return (JSON.parse(r.stdout) as { job_id: string }).job_id;
}

export async function runCycle(
  ctx: CampaignContext,
  cell: Cell,
  plan: KillPlan,
  n: number,
): Promise<CycleOutcome> {
  const store = ctx.stores[cell.store];
  if (!store) throw new Error(`no ${cell.store} store in this campaign`);
  const before = await store.readAll();
  const known = new Set(before.map((e) => e.stream));
  const env: Record<string, string> =
    plan.how === "fault" ? { LOOPGATE_FAULT_KILL_AFTER_EVENTS: String(plan.k) } : {};
  const variant = plan.variant ?? "processes";
  const jobs: string[] = [];
  const worker = (id: string, extra: string[], e: Record<string, string> = {}) =>
    // A submitted task is written out under --work-dir with the run folders: beside the task, as before.
    loopgate(
      [
        "worker",
        "--store",
        store.flag,
        ...LEASE,
        "--id",
        `k${n}-${id}`,
        "--work-dir",
        join(dirname(ctx.task), ".loopgate"),
        ...extra,
      ],
      e,
    );
  let victim: Proc;
  let survivor: Proc | undefined;
  if (cell.mode === "run+resume") {
    victim = loopgate(
      ["run", ctx.task, ...ctx.builderArgs[cell.builder], "--store", store.flag, "--json"],
      env,
    );
  } else if (cell.mode === "1 worker") {
    jobs.push(await submit(ctx, cell, store.flag));
    victim = worker("a", ["--once"], env);
  } else {
    jobs.push(...(await Promise.all([submit(ctx, cell, store.flag), submit(ctx, cell, store.flag)])));
    victim = worker("a", ["--until-idle", ...(variant === "concurrency" ? ["--concurrency", "2"] : [])], env);
  }
  const poll = poller(store, (before.at(-1)?.position ?? 0) + 1, known, victim);
  const claimed = victim.saw("claimed job-");
  if (cell.mode === "2 workers" && variant === "processes") {
    await Promise.race([claimed, victim.done]);
    survivor = worker("b", ["--until-idle"]);
  }
  if (plan.how === "signal") {
    await Promise.race([cell.mode === "run+resume" ? poll.firstRunEvent : claimed, victim.done]);
    await sleep(plan.delayMs);
    victim.kill();
  }
  const end: Finished = await victim.done;
  await poll.done;
  const out: CycleOutcome = {
    killed: end.signal === "SIGKILL",
    hit: "",
    corrupted: [],
    lost: [],
    blind: [],
    notResumable: [],
    resumed: 0,
    equal: 0,
    mismatches: [],
    inDoubtAtKill: 0,
  };

  // Right after the kill: the store's own check, the invariants, every acknowledged event still there.
  const afterKill = await store.readAll();
  out.corrupted.push(...(await store.integrity()), ...logProblems(afterKill));
  out.lost.push(...lostAcknowledged(poll.seen, afterKill), ...lostAcknowledged(before, afterKill));
  const fresh = afterKill.filter((e) => !known.has(e.stream));
  const runStreams = [...new Set(fresh.map((e) => e.stream).filter((s) => runIdOf(s)))];
  if (plan.how === "fault" && out.killed) {
    const short = runStreams.map((s) => shortOfCount(afterKill, s, plan.k));
    if (runStreams.length === 0 || short.every((p) => p.length > 0))
      out.lost.push(
        ...(short.flat().length
          ? short.flat()
          : [`no run stream, though ${plan.k} appends were acknowledged`]),
      );
  }
  out.inDoubtAtKill = openMutatingCalls(fresh).length;
  out.hit =
    runStreams
      .map((s) => {
        const own = fresh.filter((e) => e.stream === s);
        return `${own.length} events, last ${own.at(-1)?.type}`;
      })
      .join("; ") || "no run yet";

  // Take over to the end: resume, or a worker claiming the expired lease.
  if (cell.mode === "run+resume") {
    for (const s of runStreams) {
      const r = await loopgate(["resume", runIdOf(s) ?? "", "--store", store.flag, "--json"]).done;
      // Any verdict is a resumed run (a wrong one shows in the envelope column); no envelope is not.
      if (!/"run_id"/.test(r.stdout))
        out.notResumable.push(`${s}: resume exit ${r.code} without an envelope: ${r.stderr.slice(-400)}`);
    }
    if (runStreams.length === 0) out.notResumable.push("the kill left no run to resume");
  } else {
    const next = survivor ?? worker("b", ["--until-idle"]);
    const r = await next.done;
    if (r.code !== 0) out.notResumable.push(`takeover worker exit ${r.code}: ${r.stderr.slice(-400)}`);
  }
  const attempts = new Map<string, number>();
  if (ctx.jobs && jobs.length) {
    for (const j of await ctx.jobs(jobs)) {
      if (j.state !== "finished" || !j.runId) out.notResumable.push(`${j.jobId}: ${j.state}, run ${j.runId}`);
      if (j.runId) attempts.set(j.runId, j.attempts);
    }
  }

  // At the end: the same checks over the whole log, and every interrupted run ended as an uninterrupted one.
  const final = await store.readAll();
  out.corrupted.push(...(await store.integrity()), ...logProblems(final));
  out.lost.push(...lostAcknowledged(afterKill, final));
  const cycleEvents = final.filter((e) => !known.has(e.stream));
  out.blind.push(...blindReruns(cycleEvents));
  const ref = ctx.reference[cell.builder];
  const runs = [...new Set(cycleEvents.map((e) => runIdOf(e.stream)).filter((r): r is string => r !== null))];
  for (const id of runs) {
    const interrupted =
      cycleEvents.some((e) => e.stream === `run-${id}` && e.type === "run_resumed") ||
      (attempts.get(id) ?? 1) > 1;
    const envelope = envelopeOf(id, final);
    if (!envelope) {
      out.notResumable.push(`run ${id} did not finish`);
      continue;
    }
    const same = isDeepStrictEqual(comparable(envelope), ref.envelope);
    if (interrupted) {
      out.resumed++;
      if (same) out.equal++;
    }
    if (!same) out.mismatches.push(`run ${id}: ${envelope.status} (${envelope.reason})`);
  }
  return out;
}
