// The overlay workspace (LOOPGATE_WORKSPACE=overlay) against baselines measured in the same run: a repeat
// observation against `git status`, observing a builder's new files against the builder's own time, run
// set-up against `cp -a`. The tree is 20,000 files and the builder makes 10,000 unless
// LOOPGATE_BENCH_OVERLAY=full (200,000 and 100,000: many minutes on a slow disk, about 2 GB of scratch). Needs root.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { DEFAULT_LIMITS, type ObservationLimits } from "../src/core/task/limits.js";
import { pristineSnapshot } from "../src/runner/run/context/pristine-snapshot.js";
import { probeOverlay, unmountAllUnder, unmountOverlay } from "../src/workspace/overlay-mount.js";
import { OverlayObserver } from "../src/workspace/overlay-observer.js";
import { createOverlay, discardUpper, type OverlayWorkspace } from "../src/workspace/overlay-workspace.js";
import { type BenchResult, formatBenchTable } from "./bench-result.js";
import { generateTree, gitRepository, median, removeTree, result, time } from "./workspace-bench.js";

const FULL = process.env.LOOPGATE_BENCH_OVERLAY === "full";
const TREE_FILES = FULL ? 200_000 : 20_000;
const NEW_FILES = FULL ? 100_000 : 10_000;
const RUNS = 5;
const SLOW_RUNS = 3;
/** Limits a task with a tree this size would set: every check runs, none is crossed. */
const LIMITS: ObservationLimits = {
  files: 1_000_000,
  totalBytes: 64 * 1024 ** 3,
  fileBytes: DEFAULT_LIMITS.file_bytes,
};
const count = (n: number) => n.toLocaleString("en-US");

/** The size this run measures, for the section's title and notes. */
export const overlayBenchSize = `${count(TREE_FILES)} files${FULL ? "" : "; LOOPGATE_BENCH_OVERLAY=full for 200,000"}`;

/** The builder's part: `n` files of ~40 bytes in 100 new directories. */
function makeFlood(ws: string, n: number) {
  for (let d = 0; d < 100; d++) {
    mkdirSync(path.join(ws, `new${d}`));
    for (let f = 0; f < n / 100; f++)
      writeFileSync(path.join(ws, `new${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
  }
}

/** Run set-up as prepare-run.ts does it on an overlay: the snapshot found current, its observation linked, a mount. */
async function overlaySetup(store: string, source: string, runDir: string): Promise<OverlayWorkspace> {
  const snap = await pristineSnapshot(store, source, [], () => true, null);
  if (snap.made) throw new Error("the snapshot was made again: the bench measures its reuse");
  mkdirSync(path.join(runDir, "observations"));
  copyFileSync(snap.observationFile, path.join(runDir, "observations", `${snap.observation.id}.json`));
  return createOverlay(runDir, snap.tree, snap.observation.id);
}

/** Measures the three overlay figures on one generated tree; an empty list (and a line why) where overlays cannot mount. */
export async function benchWorkspaceOverlay(): Promise<BenchResult[]> {
  const base = mkdtempSync(path.join(tmpdir(), "loopgate-overlaybench-"));
  const why = probeOverlay(base);
  if (why) {
    removeTree(base);
    process.stderr.write(`  skipped: ${why}\n`);
    return [];
  }
  try {
    const tree = path.join(base, "tree");
    mkdirSync(tree);
    const { files, importStream } = generateTree(tree, TREE_FILES);
    const git = gitRepository(path.join(base, "git"), tree, importStream);
    const store = path.join(base, "store");
    const snap = await pristineSnapshot(store, tree, [], () => true, null);
    const runs = path.join(base, "runs");
    mkdirSync(runs);
    const results: BenchResult[] = [];

    // 3. Run set-up, first: the source must be untouched since the snapshot for it to be reused.
    const setupT: number[] = [];
    const cpT: number[] = [];
    for (let i = 0; i < SLOW_RUNS; i++) {
      const runDir = path.join(runs, `setup${i}`);
      mkdirSync(runDir);
      setupT.push(await time(() => overlaySetup(store, tree, runDir)));
      unmountOverlay(path.join(runDir, "workspace"));
      cpT.push(await time(() => execFileSync("cp", ["-a", tree, path.join(base, "cp")])));
      removeTree(path.join(base, "cp"));
    }
    results.push(
      result(
        `run set-up, ${count(TREE_FILES)} files`,
        median(setupT),
        median(cpT),
        0.1,
        "snapshot reused + mount; baseline: cp -a",
      ),
    );

    // 1. Repeat observation after 10 changed files, against git status after 10 changed files.
    mkdirSync(path.join(runs, "observe"));
    const o = createOverlay(path.join(runs, "observe"), snap.tree, snap.observation.id);
    const observer = new OverlayObserver(o.merged, o.upper, snap.observation, { limits: LIMITS });
    await observer.observe();
    const change = (root: string, run: number) => {
      for (let k = 0; k < 10; k++) {
        const rel = files[(run * 997 + k * 1999) % files.length] as string;
        writeFileSync(path.join(root, rel), `changed in run ${run}\n`);
      }
    };
    const repeatT: number[] = [];
    const freshT: number[] = [];
    const gitT: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await discardUpper(o);
      change(o.merged, i);
      let seen = 0;
      repeatT.push(await time(async () => (seen = (await observer.observe()).entries.length)));
      const changedFiles = observer.lastChanged.filter((e) => e.type === "file").length;
      if (changedFiles !== 10 || seen !== snap.observation.entries.length)
        throw new Error(`the observation saw ${changedFiles} changed files of 10`);
      // As a run's observe phase does it: a new observer, its stat cache from a file.
      const cacheFile = path.join(runs, `observe-cache${i}.json`);
      freshT.push(
        await time(() =>
          new OverlayObserver(o.merged, o.upper, snap.observation, { limits: LIMITS, cacheFile }).observe(),
        ),
      );
      change(tree, i);
      gitT.push(await time(() => git("status", "--porcelain")));
    }
    results.push(
      result(
        `repeat observation after 10 changed files, ${count(TREE_FILES)}`,
        median(repeatT),
        median(gitT),
        0.1,
        "overlay observer; baseline: git status",
      ),
    );
    results.push(
      result(
        "  the same, a new observer (as a run's observe phase)",
        median(freshT),
        median(gitT),
        undefined,
        "indexes the pristine observation first",
      ),
    );

    // 2. Observing the builder's new files, against the builder's own time to make them.
    const builderT: number[] = [];
    const observeT: number[] = [];
    for (let i = 0; i < SLOW_RUNS; i++) {
      await discardUpper(o);
      const cacheFile = path.join(runs, `flood-cache${i}.json`);
      const flood = new OverlayObserver(o.merged, o.upper, snap.observation, { limits: LIMITS, cacheFile });
      builderT.push(await time(() => makeFlood(o.merged, NEW_FILES)));
      observeT.push(await time(() => flood.observe()));
      if (flood.lastChanged.length !== NEW_FILES + 100)
        throw new Error(`the observation saw ${flood.lastChanged.length} new paths of ${NEW_FILES + 100}`);
    }
    // Load on a shared machine moves both times together, so the ratio is taken per run, then its median.
    const floodRatio = median(observeT.map((t, i) => t / (builderT[i] as number)));
    results.push({
      ...result(
        `observing ${count(NEW_FILES)} new files`,
        median(observeT),
        median(builderT),
        1,
        "baseline: the builder writing them",
      ),
      ratio: Math.round(floodRatio * 100) / 100,
      met: floodRatio <= 1,
    });
    return results;
  } finally {
    unmountAllUnder(base);
    removeTree(base);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const results = await benchWorkspaceOverlay();
  console.log(`overlay workspace, ${overlayBenchSize}`);
  console.log(formatBenchTable(results));
  if (results.some((r) => !r.met)) process.exitCode = 1;
}
