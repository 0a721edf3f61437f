import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { InputError } from "../../src/core/errors.js";
import { type LoadedManifest, loadManifest } from "../../src/experiments/manifest.js";
import { planExperiment } from "../../src/experiments/plan.js";
import { type ExperimentExport, runExperiment } from "../../src/experiments/run-experiment.js";
import { type ForgeryTable, forgeryTable } from "./table.js";

/** The benchmark's manifest: scenarios as an experiment, arms = the policies compared. */
export const FORGERY_MANIFEST = join(dirname(fileURLToPath(import.meta.url)), "forgery.yaml");

/** The manifest, restricted to the scenarios named in `only` (all when absent). */
export function forgeryManifest(only?: readonly string[]): LoadedManifest {
  const source = loadManifest(FORGERY_MANIFEST);
  if (only?.length) {
    const known = new Set(source.manifest.tasks.map((t) => t.id));
    const unknown = only.filter((id) => !known.has(id));
    if (unknown.length)
      throw new InputError(`no scenario ${unknown.join(", ")}; known: ${[...known].join(", ")}`, "--only");
    source.manifest.tasks = source.manifest.tasks.filter((t) => only.includes(t.id));
  }
  return source;
}

/** Runs the benchmark (or a subset) through the experiment runner and scores it. */
export async function runForgeryBench(o: {
  outDir: string;
  only?: readonly string[];
  concurrency?: number;
  progress?: (line: string) => void;
}): Promise<{ experiment: ExperimentExport; table: ForgeryTable }> {
  const source = forgeryManifest(o.only);
  if (o.concurrency) source.manifest.concurrency = o.concurrency;
  const experiment = await runExperiment({
    plan: planExperiment(source),
    outDir: o.outDir,
    ...(o.progress ? { progress: o.progress } : {}),
  });
  return { experiment, table: forgeryTable(experiment) };
}
