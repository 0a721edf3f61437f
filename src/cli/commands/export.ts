import { resolve } from "node:path";
import { exportRunTree } from "../../runner/run/run-tree.js";
import { openStore, readRun, storeFrom } from "../output/context.js";
import type { CommandIO } from "../output/io.js";
import { formatBytes } from "./gc.js";

/**
 * `loopgate export RUN DIR [--attempt N]`: writes the run's workspace as its log recorded it (the last
 * observation, or the one after attempt N's builder) into DIR, whatever the run's layout (a copy, or an
 * overlay whose changes sit over a shared snapshot) and wherever it was driven (a shared store's content).
 */
export async function exportCommand(
  io: CommandIO,
  runId: string,
  dest: string,
  flags: { store?: string; attempt?: number; json?: boolean },
): Promise<number> {
  const where = storeFrom(flags.store);
  const store = await openStore(where, "read", runId);
  try {
    const events = await readRun(store, where.label, runId);
    const out = await exportRunTree({
      runId,
      events,
      localDir: where.dir,
      shared: store.content?.() ?? null,
      dest: resolve(dest),
      ...(flags.attempt !== undefined ? { attempt: flags.attempt } : {}),
    });
    if (flags.json) {
      io.out(`${JSON.stringify(out)}\n`);
      return 0;
    }
    const what =
      out.phase === "pristine"
        ? "pristine tree (no builder's work was observed)"
        : `workspace after attempt ${out.attempt}'s builder`;
    io.out(
      `loopgate export: wrote run ${runId}'s ${what} to ${out.dir}: ${out.files} file(s), ${out.dirs} folder(s), ${out.symlinks} symlink(s), ${formatBytes(out.bytes)} (observation ${out.observation_id.slice(0, 12)})\n`,
    );
    if (out.skipped.length)
      io.err(
        `loopgate export: not written (FIFOs, sockets or devices the builder left): ${out.skipped.slice(0, 10).join(", ")}${out.skipped.length > 10 ? ` and ${out.skipped.length - 10} more` : ""}\n`,
      );
    return 0;
  } finally {
    await store.close();
  }
}
