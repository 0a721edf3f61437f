import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { InputError, LoopgateError } from "../../core/kernel/errors.js";
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
  flags: { store?: string; junit?: string; markdown?: string; html?: string },
): Promise<number> {
  const targets = reportTargets(flags);
  if (flags.html !== undefined && flags.html.trim() === "")
    throw new InputError("needs a file name", "--html");
  const where = storeFrom(flags.store);
  const store = await openStore(where, "read", runId);
  try {
    const env = projectEnvelope(runId, await readRun(store, where.label, runId));
    if (!env)
      throw new LoopgateError(
        "run_unfinished",
        `loopgate report: run ${runId} has not finished (no verdict in its log); report it once it has, or \`loopgate resume ${runId}\``,
      );
    if (!targets.junit && !targets.markdown && flags.html === undefined) io.out(renderMarkdown(env));
    for (const file of await writeReports(env, targets)) io.err(`loopgate report: wrote ${file}\n`);
    if (flags.html !== undefined)
      io.err(`loopgate report: wrote ${await writeHtmlReport(store, where, runId, flags)}\n`);
    return exitCodeOf(env.status);
  } finally {
    await store.close();
  }
}

/** `--html FILE`: the run's page of loopgate serve as one self-contained file, written where asked. */
async function writeHtmlReport(
  store: Awaited<ReturnType<typeof openStore>>,
  where: ReturnType<typeof storeFrom>,
  runId: string,
  flags: { store?: string; html?: string },
): Promise<string> {
  const file = resolve(flags.html as string);
  const { cliReaders } = await import("./serve.js");
  const { readRunPage, runReportDocument } = await import("../../serve/run-view.js");
  const page = await readRunPage(store, where.dir, where.label, runId, cliReaders(where, flags.store));
  try {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, runReportDocument(page));
  } catch (e) {
    throw new InputError(`cannot write ${file}: ${e instanceof Error ? e.message : String(e)}`, "--html");
  }
  return file;
}
