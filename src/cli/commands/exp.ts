import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { InputError } from "../../core/kernel/errors.js";
import { planExperiment } from "../../experiments/experiment-plan.js";
import { formatExperimentReport } from "../../experiments/experiment-report.js";
import { loadManifest } from "../../experiments/manifest.js";
import { runExperiment } from "../../experiments/run-experiment.js";
import { newRunId } from "../../runner/run/run-task.js";
import { storeFrom } from "../output/context.js";
import { handleInterrupts } from "../output/interrupt.js";
import type { CommandIO } from "../output/io.js";

/** Flags of `loopgate exp`. */
export interface ExpFlags {
  json?: boolean;
  out?: string;
  store?: string;
}

/**
 * `loopgate exp run MANIFEST [--json] [--out FILE] [--store DIR]`: runs every arm × task × seed of an
 * experiment manifest, each run with its own store under `<store>/experiments/<name>-<stamp>/`, and
 * reports counts per arm and paired outcomes. Exit 0 when it completed, whatever the outcomes; 2 on bad
 * input or when it was interrupted.
 */
export async function expCommand(io: CommandIO, rest: string[], flags: ExpFlags): Promise<number> {
  const [sub, manifestPath] = rest;
  if (sub !== "run") throw new InputError("the only subcommand is `run MANIFEST`", "loopgate exp");
  if (!manifestPath) throw new InputError("missing MANIFEST; see loopgate --help", "loopgate exp run");
  const source = loadManifest(manifestPath);
  const plan = planExperiment(source);
  const where = storeFrom(flags.store);
  // A PostgreSQL store from $LOOPGATE_STORE is the other commands' business: exp keeps its logs in the
  // local folder (./.loopgate). Given on the command line, it is refused.
  if (where.kind === "postgres" && where.source === "flag")
    throw new InputError(
      `exp keeps a SQLite log per run under the experiment's folder (every arm, task and seed apart, so runs cannot see each other); it does not take a PostgreSQL store (${where.label}): give --store a folder, or leave it out (the nearest .loopgate/ walking up, else ./.loopgate/)`,
      "loopgate exp run --store",
    );
  const localDir = where.dir;
  const outDir = join(localDir, "experiments", `${source.manifest.name}-${newRunId()}`);
  const interrupts = handleInterrupts((sig) =>
    io.err(
      `\nloopgate exp: ${sig}: stopping the running runs and recording them (press again to quit at once)\n`,
    ),
  );
  try {
    const result = await runExperiment({
      plan,
      outDir,
      progress: (line) => io.err(`${line}\n`),
      signal: interrupts.signal,
    });
    if (flags.out) {
      const file = resolve(flags.out);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
    }
    io.out(flags.json ? `${JSON.stringify(result, null, 2)}\n` : formatExperimentReport(result));
    return result.interrupted ? 2 : 0;
  } finally {
    interrupts.dispose();
  }
}
