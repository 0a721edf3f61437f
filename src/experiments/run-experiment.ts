import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { LoopgateEvent } from "../core/events/loopgate-event.js";
import type { Envelope } from "../core/run/envelope.js";
import { runTask } from "../runner/run/run-task.js";
import { RunJournal } from "../runner/stream/run-journal.js";
import { SqliteEventStore } from "../store/sqlite/sqlite-event-store.js";
import type { ExperimentPlan, PlannedTask } from "./experiment-plan.js";
import type { Arm } from "./manifest.js";
import { type ExperimentSummary, type Pair, pairRuns, type RunRecord, summarize } from "./pairing.js";
import { finalMessages, judgeRun, type PolicyVerdict, setupPolicy } from "./policies.js";

/** The JSON export of an experiment (`loopgate exp run --out FILE`; also `<out_dir>/experiment.json`). */
export interface ExperimentExport {
  format: "loopgate-experiment/1";
  name: string;
  description: string | null;
  manifest: string;
  out_dir: string;
  started_at: string;
  finished_at: string;
  duration_ms: number;
  /** True when the experiment was stopped before every run finished; missing runs are unpaired. */
  interrupted: boolean;
  control: string;
  seeds: number;
  sandbox: "bubblewrap" | "none";
  arms: { id: string; policy: string; from: string | null; description: string | null }[];
  tasks: { id: string; task: string; task_id: string; max_attempts: number; meta: Record<string, unknown> }[];
  runs: RunRecord[];
  pairs: Pair[];
  summary: ExperimentSummary;
}

export interface ExperimentOptions {
  plan: ExperimentPlan;
  /** Created if missing; each run gets its own store under `<outDir>/runs/<task>/seed-<n>/<arm>/`. */
  outDir: string;
  /** One line per event worth telling (a run started or finished). */
  progress?: (line: string) => void;
  signal?: AbortSignal;
  clock?: () => Date;
}

interface Job {
  task: PlannedTask;
  seed: number;
  arm: Arm;
}

const lastLine = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.trim())
    .at(-1)
    ?.slice(0, 200) ?? null;

/** Runs arms × tasks × seeds through loopgate's runner, each run with its own fresh store; pairs the results. */
export async function runExperiment(o: ExperimentOptions): Promise<ExperimentExport> {
  const { plan } = o;
  const m = plan.source.manifest;
  const clock = o.clock ?? (() => new Date());
  const started = clock();
  const t0 = performance.now();
  await mkdir(o.outDir, { recursive: true });
  const own = plan.arms.filter((a) => a.from === undefined);
  const jobs: Job[] = [];
  for (const task of plan.tasks)
    for (let seed = 1; seed <= m.seeds; seed++) for (const arm of own) jobs.push({ task, seed, arm });
  const total = plan.tasks.length * m.seeds * plan.arms.length;
  o.progress?.(
    `experiment ${m.name}: ${plan.arms.length} arms × ${plan.tasks.length} tasks × ${m.seeds} seeds = ${total} results from ${jobs.length} runs, ${m.concurrency} at a time; output in ${o.outDir}`,
  );
  const records: RunRecord[] = [];
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (;;) {
      if (o.signal?.aborted) return;
      const job = jobs[next++];
      if (!job) return;
      const results = await runJob(plan, job, o.outDir, o.signal);
      records.push(...results);
      done++;
      const first = results[0] as RunRecord;
      const extra = results
        .slice(1)
        .map((r) => `; ${r.arm}: ${r.status}`)
        .join("");
      o.progress?.(
        `[${done}/${jobs.length}] ${job.task.entry.id} seed ${job.seed} ${job.arm.id}: ${first.status} (${first.reason.slice(0, 100)}) ${(first.duration_ms / 1000).toFixed(1)} s${extra}`,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(m.concurrency, jobs.length) }, worker));
  const armIds = m.arms.map((a) => a.id);
  const taskIds = plan.tasks.map((t) => t.entry.id);
  const order = (r: RunRecord) => [taskIds.indexOf(r.task), r.seed, armIds.indexOf(r.arm)];
  records.sort((a, b) => {
    const [x, y] = [order(a), order(b)];
    return (
      (x[0] as number) - (y[0] as number) ||
      (x[1] as number) - (y[1] as number) ||
      (x[2] as number) - (y[2] as number)
    );
  });
  const pairs = pairRuns(records, armIds, plan.control, taskIds, m.seeds);
  const result: ExperimentExport = {
    format: "loopgate-experiment/1",
    name: m.name,
    description: m.description ?? null,
    manifest: plan.source.file,
    out_dir: o.outDir,
    started_at: started.toISOString(),
    finished_at: clock().toISOString(),
    duration_ms: Math.round(performance.now() - t0),
    interrupted: done < jobs.length,
    control: plan.control,
    seeds: m.seeds,
    sandbox: m.sandbox,
    arms: m.arms.map((a) => ({
      id: a.id,
      policy: a.policy,
      from: a.from ?? null,
      description: a.description ?? null,
    })),
    tasks: plan.tasks.map((t) => ({
      id: t.entry.id,
      task: t.loaded.file,
      task_id: t.loaded.task.id,
      max_attempts: t.maxAttempts,
      meta: t.entry.meta,
    })),
    runs: records,
    pairs,
    summary: summarize(records, pairs, armIds, plan.control),
  };
  await writeFile(join(o.outDir, "experiment.json"), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

/** Runs one (task, seed, arm) and judges it for that arm and for every arm that judges its runs. */
async function runJob(
  plan: ExperimentPlan,
  job: Job,
  outDir: string,
  signal?: AbortSignal,
): Promise<RunRecord[]> {
  const m = plan.source.manifest;
  const { task, seed, arm } = job;
  const localDir = join(outDir, "runs", task.entry.id, `seed-${seed}`, arm.id);
  const judges = [arm, ...plan.arms.filter((a) => a.from === arm.id)];
  const setup = setupPolicy(arm.policy, task.loaded);
  const gateIds = setup.loaded.task.gates.map((g) => g.id);
  const t0 = performance.now();
  let envelope: Envelope | null = null;
  let events: LoopgateEvent[] = [];
  let thrown: string | null = null;
  let store: SqliteEventStore | null = null;
  try {
    await mkdir(localDir, { recursive: true });
    store = SqliteEventStore.open(join(localDir, "events.db"));
    const make = task.builders.get(arm.id);
    if (!make) throw new Error(`no builder for arm ${arm.id}`);
    envelope = await runTask({
      loaded: setup.loaded,
      builder: make(),
      store,
      localDir,
      sandbox: m.sandbox,
      allowEnv: m.builder_env,
      ...(m.network !== undefined ? { network: m.network } : {}),
      maxAttempts: task.maxAttempts,
      gateEnvironment: setup.gateEnvironment,
      ...(signal ? { signal } : {}),
    });
    events = await store.readStream(RunJournal.stream(envelope.run_id));
  } catch (e) {
    thrown = `the run could not be carried out: ${e instanceof Error ? e.message : String(e)}`;
  } finally {
    await store?.close();
  }
  const duration = Math.round(performance.now() - t0);
  return judges.map((a): RunRecord => {
    const verdict: PolicyVerdict =
      envelope && !thrown
        ? judgeRun(a.policy, envelope, events, gateIds)
        : { status: "TOOL_FAILURE", reason: thrown ?? "no envelope" };
    const final = envelope?.gates.filter((g) => g.attempt === envelope?.attempts) ?? [];
    const claim = finalMessages(events).at(-1)?.text || envelope?.claims.at(-1)?.text;
    return {
      task: task.entry.id,
      seed,
      arm: a.id,
      policy: a.policy,
      status: verdict.status,
      reason: verdict.reason,
      run_status: envelope?.status ?? null,
      run_id: envelope?.run_id ?? null,
      judged_run_of: a.id === arm.id ? null : arm.id,
      attempts: envelope?.attempts ?? 0,
      gates_failed: final.filter((g) => !g.passed).map((g) => g.id),
      blocking_findings: [
        ...new Set(envelope?.findings.filter((f) => f.severity === "blocking").map((f) => f.code) ?? []),
      ],
      claim: claim ? lastLine(claim) : null,
      store: localDir,
      duration_ms: duration,
    };
  });
}
