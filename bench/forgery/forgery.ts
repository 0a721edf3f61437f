import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { InputError } from "../../src/core/kernel/errors.js";
import { planExperiment } from "../../src/experiments/experiment-plan.js";
import { type LoadedManifest, loadManifest } from "../../src/experiments/manifest.js";
import { type ExperimentExport, runExperiment } from "../../src/experiments/run-experiment.js";
import { type ForgeryTable, forgeryTable } from "./table.js";

/** The benchmark's manifest: scenarios as an experiment, arms = the policies compared. */
const HERE = dirname(fileURLToPath(import.meta.url));
export const FORGERY_MANIFEST = join(HERE, "forgery.yaml");
/** The real-agent scenarios: one manifest per agent CLI (its binary may be missing; then it is skipped). */
export const AGENT_MANIFESTS = [
  { agent: "claude-code" as const, file: join(HERE, "agents-claude.yaml") },
  { agent: "codex" as const, file: join(HERE, "agents-codex.yaml") },
];

/** Every scenario id of every manifest of the benchmark. */
export function allScenarioIds(): string[] {
  return [FORGERY_MANIFEST, ...AGENT_MANIFESTS.map((m) => m.file)].flatMap((f) =>
    loadManifest(f).manifest.tasks.map((t) => t.id),
  );
}

/** The manifest, restricted to the scenarios named in `only` (all when absent; unknown ids are refused). */
export function forgeryManifest(only?: readonly string[], file = FORGERY_MANIFEST): LoadedManifest {
  const source = loadManifest(file);
  if (only?.length) {
    const known = allScenarioIds();
    const unknown = only.filter((id) => !known.includes(id));
    if (unknown.length)
      throw new InputError(`no scenario ${unknown.join(", ")}; known: ${known.join(", ")}`, "--only");
    source.manifest.tasks = source.manifest.tasks.filter((t) => only.includes(t.id));
  }
  return source;
}

/** Runs the benchmark (or a subset) through the experiment runner and scores it. */
export async function runForgeryBench(o: {
  outDir: string;
  only?: readonly string[];
  /** Only these policies (arms), and any arm one of them is derived `from`; all when absent. */
  arms?: readonly string[];
  concurrency?: number;
  progress?: (line: string) => void;
  /** Another manifest of the benchmark (a real-agent one); default forgery.yaml. */
  manifest?: string;
}): Promise<{ experiment: ExperimentExport; table: ForgeryTable }> {
  const source = forgeryManifest(o.only, o.manifest);
  if (o.arms?.length) source.manifest.arms = onlyArms(source.manifest.arms, o.arms);
  linkRunnerDeps();
  if (o.concurrency) source.manifest.concurrency = o.concurrency;
  const experiment = await runExperiment({
    plan: planExperiment(source),
    outDir: o.outDir,
    ...(o.progress ? { progress: o.progress } : {}),
  });
  return { experiment, table: forgeryTable(experiment) };
}

/** The arms named in `keep` and the arms they are derived from; an unknown name is refused. */
export function onlyArms<A extends { id: string; from?: string | undefined }>(
  arms: readonly A[],
  keep: readonly string[],
): A[] {
  const unknown = keep.filter((id) => !arms.some((a) => a.id === id));
  if (unknown.length)
    throw new InputError(
      `no policy ${unknown.join(", ")}; known: ${arms.map((a) => a.id).join(", ")}`,
      "arms",
    );
  const wanted = new Set(keep);
  for (const a of arms) if (wanted.has(a.id) && a.from) wanted.add(a.from);
  return arms.filter((a) => wanted.has(a.id));
}

/** The Vitest and Jest tasks' node_modules (not kept in git): linked from this repository's once, kept after. */
function linkRunnerDeps(): void {
  execFileSync(process.execPath, [join(HERE, "tasks", "link-runner-deps.mjs")], { stdio: "ignore" });
}
