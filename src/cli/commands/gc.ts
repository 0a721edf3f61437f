import { formatDuration } from "../../core/kernel/duration.js";
import { InputError } from "../../core/kernel/errors.js";
import { ageProblem, type GcPolicy, MAX_AGE_MS, parseAge, planGc } from "../../core/run/gc-plan.js";
import { listGcRuns, type PruneResult, pruneRuns } from "../../runner/run/prune-runs.js";
import {
  asPostgresStore,
  type PgPruneReport,
  type PostgresEventStore,
  postgresRoom,
} from "../../store/open-store.js";
import { openStore, storeFrom } from "../output/context.js";
import type { CommandIO } from "../output/io.js";

/** Bytes as a person reads them. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = -1;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

/**
 * `loopgate gc [--older-than AGE] [--keep N] [--dry-run] [--json]`: removes the folders of finished runs
 * (their events stay); never a run without a verdict or an interrupted one.
 */
export async function gcCommand(
  io: CommandIO,
  flags: { store?: string; "older-than"?: string; keep?: number; "dry-run"?: boolean; json?: boolean },
  now: () => Date = () => new Date(),
): Promise<number> {
  const age = flags["older-than"] ?? "7d";
  const olderThanMs = parseAge(age);
  if (olderThanMs === null)
    throw new InputError(
      `expected an age with a unit (90s, 30m, 12h, 7d, 2w; 0s for any age; at most ${formatDuration(MAX_AGE_MS)}): ${ageProblem(age)}`,
      "--older-than",
    );
  const keep = flags.keep ?? 0;
  const where = storeFrom(flags.store);
  const dir = where.dir;
  const store = await openStore(where, false);
  try {
    const policy = { olderThanMs, keep };
    const dryRun = Boolean(flags["dry-run"]);
    const r = await pruneRuns({ store, localDir: dir, policy, now: now(), dryRun });
    const pgStore = asPostgresStore(store);
    const database = pgStore ? await pruneDatabase(pgStore, policy, now(), dryRun) : undefined;
    if (flags.json) {
      io.out(`${JSON.stringify(database ? { ...r, database } : r, null, 2)}\n`);
      return 0;
    }
    if (database) printDatabase(io, r, database, where.label);
    const verb = r.dry_run ? "would remove" : "removed";
    for (const x of r.removed)
      io.out(
        `${verb} ${x.run_id}  ${String(x.status).padEnd(12)} ${formatBytes(x.bytes)} (${x.files} files)\n`,
      );
    const kept = new Map<string, number>();
    for (const k of r.kept) kept.set(k.why, (kept.get(k.why) ?? 0) + 1);
    for (const [why, n] of kept) io.out(`kept ${n} run(s): ${why}\n`);
    for (const u of r.unknown_folders) io.out(`left alone (no run of this log names it): ${u}\n`);
    for (const d of r.dependencies_removed)
      io.out(`${verb} shared dependency copy ${d} (no kept run uses it)\n`);
    for (const x of r.snapshots_removed)
      io.out(
        x.snapshot.endsWith(".tmp")
          ? `${verb} crashed workspace snapshot copy ${x.snapshot} (${formatBytes(x.bytes)})\n`
          : x.snapshot.includes("/current.")
            ? `${verb} stray workspace snapshot pointer ${x.snapshot}\n`
            : `${verb} workspace snapshot ${x.snapshot} (no run uses it; ${formatBytes(x.bytes)})\n`,
      );
    for (const x of r.snapshots_left) io.out(`left workspace snapshot(s) alone: ${x.path}: ${x.why}\n`);
    io.out(
      database
        ? `${r.dry_run ? "dry run: would free" : "freed"} ${formatBytes(r.freed_bytes)} (${r.freed_bytes} bytes) from ${r.removed.length} run folder(s) on this machine in ${dir}\n`
        : `${r.dry_run ? "dry run: would free" : "freed"} ${formatBytes(r.freed_bytes)} (${r.freed_bytes} bytes) from ${r.removed.length} run folder(s) in ${dir}; their events stay in the log\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * On a Postgres store `gc` removes the runs it lets go from the database too (their events, their finished
 * queue jobs) and then the observations and blobs only they named: there, the store is what grows.
 */
async function pruneDatabase(
  store: PostgresEventStore,
  policy: GcPolicy,
  now: Date,
  dryRun: boolean,
): Promise<PgPruneReport> {
  const runs = await listGcRuns(store);
  const byId = new Map(runs.map((r) => [r.runId, r]));
  const candidates = planGc(runs, policy, now)
    .filter((d) => d.remove)
    .map((d) => byId.get(d.runId))
    .filter((r) => r !== undefined)
    .map((r) => ({ stream: r.stream, lastRevision: r.lastRevision }));
  const { prunePostgres } = await postgresRoom();
  return prunePostgres(store, { candidates, dryRun, jobCutoffMs: policy.olderThanMs });
}

function printDatabase(io: CommandIO, r: PruneResult, d: PgPruneReport, label: string): void {
  const verb = r.dry_run ? "would remove" : "removed";
  for (const x of d.streams) io.out(`${verb} ${x.stream.slice(4)} from the database (${x.events} events)\n`);
  for (const x of d.skipped) io.out(`left ${x.stream.slice(4)} in the database: ${x.why}\n`);
  io.out(
    `${r.dry_run ? "dry run: would remove" : "removed"} from ${label}: ${d.streams.length} run(s), ${d.jobs} finished job(s), ${d.observations} observation(s), ${d.blobs} blob(s) (${formatBytes(d.blob_bytes)}) that only removed runs named\n`,
  );
}
