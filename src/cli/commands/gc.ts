import { InputError } from "../../core/errors.js";
import { parseAge } from "../../core/gc-plan.js";
import { pruneRuns } from "../../runner/prune-runs.js";
import { openStore, storeFrom } from "../context.js";
import type { CommandIO } from "../io.js";

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
      `expected an age with a unit (30m, 12h, 7d, 2w; 0s for any age), got ${JSON.stringify(age)}`,
      "--older-than",
    );
  const keep = flags.keep ?? 0;
  const where = storeFrom(flags.store, ".loopgate");
  const dir = where.dir;
  const store = await openStore(where, false);
  try {
    const r = await pruneRuns({
      store,
      storeDir: dir,
      policy: { olderThanMs, keep },
      now: now(),
      dryRun: Boolean(flags["dry-run"]),
    });
    if (flags.json) {
      io.out(`${JSON.stringify(r, null, 2)}\n`);
      return 0;
    }
    const verb = r.dry_run ? "would remove" : "removed";
    for (const x of r.removed)
      io.out(
        `${verb} ${x.run_id}  ${String(x.status).padEnd(12)} ${formatBytes(x.bytes)} (${x.files} files)\n`,
      );
    const kept = new Map<string, number>();
    for (const k of r.kept) kept.set(k.why, (kept.get(k.why) ?? 0) + 1);
    for (const [why, n] of kept) io.out(`kept ${n} run(s): ${why}\n`);
    for (const u of r.unknown_folders) io.out(`left alone (no run of this log names it): ${u}\n`);
    io.out(
      `${r.dry_run ? "dry run: would free" : "freed"} ${formatBytes(r.freed_bytes)} (${r.freed_bytes} bytes) from ${r.removed.length} run folder(s) in ${dir}; their events stay in the log\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}
