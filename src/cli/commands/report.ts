import { LoopgateError } from "../../core/kernel/errors.js";
import { projectEnvelope } from "../../core/run/envelope.js";
import { openStore, readRun, storeFrom } from "../output/context.js";
import { exitCodeOf } from "../output/exit-codes.js";
import type { CommandIO } from "../output/io.js";
import { renderMarkdown } from "../report/markdown.js";
import { reportTargets, writeReports } from "../report/write-reports.js";

/**
 * `loopgate report RUN [--junit FILE] [--markdown FILE]`: CI reports of a finished run, rebuilt from its
 * events; without a file flag, the Markdown summary on stdout. Exits with the run's exit code.
 */
export async function reportCommand(
  io: CommandIO,
  runId: string,
  flags: { store?: string; junit?: string; markdown?: string },
): Promise<number> {
  const targets = reportTargets(flags);
  const where = storeFrom(flags.store);
  const store = await openStore(where, "read", runId);
  try {
    const env = projectEnvelope(runId, await readRun(store, where.label, runId));
    if (!env)
      throw new LoopgateError(
        "run_unfinished",
        `loopgate report: run ${runId} has not finished (no verdict in its log); report it once it has, or \`loopgate resume ${runId}\``,
      );
    if (!targets.junit && !targets.markdown) io.out(renderMarkdown(env));
    for (const file of await writeReports(env, targets)) io.err(`loopgate report: wrote ${file}\n`);
    return exitCodeOf(env.status);
  } finally {
    await store.close();
  }
}
