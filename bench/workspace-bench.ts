import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { planGateChanges } from "../src/core/observation/gate-change-plan.js";
import { copyTree } from "../src/workspace/copy-tree.js";
import { buildGateEnvironment, removeGateEnvironment } from "../src/workspace/gate-environment.js";
import { WorkspaceObserver } from "../src/workspace/observer.js";
import { probeOverlay } from "../src/workspace/overlay-mount.js";
import { type BenchResult, formatBenchTable } from "./bench-result.js";

const FILES = 20_000;
const RUNS = 5;

/** Deterministic pseudo-random numbers (mulberry32), so every run measures the same tree. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Writes `count` files (20,000 unless told) in 1,110 directories (10 × 10 × 10 plus their parents),
 * sizes mostly 100 B–8 KiB, a few 64 KiB, and returns a git fast-import stream committing them: one
 * pack instead of as many loose objects keeps set-up and clean-up short.
 */
export function generateTree(root: string, count = FILES): { files: string[]; importStream: Buffer } {
  const rand = rng(42);
  const files: string[] = [];
  const stream: Buffer[] = [];
  const line = "export const value = computeSomethingReasonablyLong(alpha, beta, gamma);\n";
  for (let i = 0; i < 10; i++) {
    for (let j = 0; j < 10; j++) {
      for (let k = 0; k < 10; k++) {
        const dir = `pkg${i}/mod${j}/part${k}`;
        mkdirSync(path.join(root, dir), { recursive: true });
        for (let f = 0; f < count / 1000; f++) {
          const size = rand() < 0.01 ? 65_536 : Math.floor(100 + rand() ** 2 * 8000);
          const rel = `${dir}/file${f}.${f % 3 === 0 ? "ts" : f % 3 === 1 ? "js" : "md"}`;
          const body = Buffer.from(`// ${rel}\n${line.repeat(Math.ceil(size / line.length))}`.slice(0, size));
          writeFileSync(path.join(root, rel), body);
          files.push(rel);
          stream.push(
            Buffer.from(`blob\nmark :${files.length}\ndata ${body.length}\n`),
            body,
            Buffer.from("\n"),
          );
        }
      }
    }
  }
  const tree = files.map((rel, i) => `M 100644 :${i + 1} ${rel}\n`).join("");
  stream.push(
    Buffer.from(
      `commit refs/heads/main\ncommitter bench <bench@example.invalid> 0 +0000\ndata 5\ntree\n${tree}\n`,
    ),
  );
  return { files, importStream: Buffer.concat(stream) };
}

/** `rm -rf` is several times faster than fs.rmSync on trees of many small files. */
export function removeTree(...dirs: string[]) {
  try {
    execFileSync("rm", ["-rf", "--", ...dirs]);
  } catch {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

export async function time(fn: () => unknown): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

export function result(
  metric: string,
  loopgate: number,
  baseline: number,
  maxRatio: number | undefined,
  note?: string,
) {
  const ratio = loopgate / baseline;
  const r: BenchResult = {
    metric,
    unit: "ms",
    loopgate: Math.round(loopgate * 10) / 10,
    baseline: Math.round(baseline * 10) / 10,
    ratio: Math.round(ratio * 100) / 100,
    target: maxRatio === undefined ? "info" : `≤ ${maxRatio}×`,
    met: maxRatio === undefined ? true : ratio <= maxRatio,
  };
  if (note) r.note = note;
  return r;
}

/**
 * Commits `tree` from `importStream` into a git directory outside it (so git and loopgate see the
 * same files) with an index fresh from the files on disk; returns a runner of git commands on it.
 */
export function gitRepository(gitDir: string, tree: string, importStream: Buffer) {
  const git = (...args: string[]) =>
    execFileSync("git", [`--git-dir=${gitDir}`, `--work-tree=${tree}`, ...args], {
      cwd: tree,
      input: args[0] === "fast-import" ? importStream : "",
      maxBuffer: 64 << 20,
    });
  execFileSync("git", ["init", "-q", "-b", "main", `--separate-git-dir=${gitDir}`, tree]);
  unlinkSync(path.join(tree, ".git"));
  git("fast-import", "--quiet");
  git("reset", "-q"); // index from HEAD, with the stat data of the files on disk
  git("update-index", "--refresh");
  return git;
}

/** Measures observation and gate-environment building on a 20,000-file tree against git status and cp -a. */
export async function benchWorkspace(): Promise<BenchResult[]> {
  const base = mkdtempSync(path.join(tmpdir(), "loopgate-wsbench-"));
  try {
    const tree = path.join(base, "tree");
    mkdirSync(tree);
    const { files, importStream } = generateTree(tree);
    const generatedAt = Date.now();
    const git = gitRepository(path.join(base, "git"), tree, importStream);

    const results: BenchResult[] = [];
    const firstObs: number[] = [];
    const firstGit: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      firstGit.push(await time(() => git("status", "--porcelain")));
      firstObs.push(await time(() => new WorkspaceObserver(tree).observe()));
    }
    results.push(result("first observation (no cache)", median(firstObs), median(firstGit), undefined));

    // Files changed within the racy window are never trusted from the cache; wait it out once, as a real tree would have.
    await new Promise((r) => setTimeout(r, Math.max(0, 2100 - (Date.now() - generatedAt))));
    const observer = new WorkspaceObserver(tree);
    await observer.observe();
    const repeatObs: number[] = [];
    const repeatGit: number[] = [];
    const touch = (run: number) => {
      const now = Date.now() / 1000;
      for (let k = 0; k < 10; k++) {
        const rel = files[(run * 997 + k * 1999) % files.length] as string;
        utimesSync(path.join(tree, rel), now, now);
      }
    };
    for (let i = 0; i < RUNS; i++) {
      touch(i);
      repeatGit.push(await time(() => git("status", "--porcelain")));
      touch(i + RUNS);
      repeatObs.push(await time(() => observer.observe()));
    }
    results.push(
      result(
        "repeat observation after touching 10 files",
        median(repeatObs),
        median(repeatGit),
        2,
        "in-memory stat cache",
      ),
    );

    // Gate environment: a run workspace with a few changes, a small held-out overlay.
    const pristine = await new WorkspaceObserver(tree).observe();
    const work = path.join(base, "work");
    await copyTree(tree, work);
    for (let k = 0; k < 5; k++) writeFileSync(path.join(work, files[k * 3001] as string), `changed ${k}\n`);
    for (let k = 0; k < 3; k++)
      writeFileSync(path.join(work, `pkg${k}/added${k}.ts`), `export const added = ${k};\n`);
    rmSync(path.join(work, files[7] as string));
    const workspace = await new WorkspaceObserver(work).observe();
    const plan = planGateChanges(pristine, workspace, { deliverables: [], protected: ["pkg9/**"] });
    const heldout = path.join(base, "heldout");
    mkdirSync(path.join(heldout, "hidden"), { recursive: true });
    for (let k = 0; k < 5; k++) writeFileSync(path.join(heldout, "hidden", `t${k}.test.ts`), `test ${k}\n`);
    const env = (mode: "link" | "copy" | "overlay") => async () => {
      const destDir = path.join(base, `env-${mode}`);
      await buildGateEnvironment({
        pristineDir: tree,
        pristine,
        workspaceDir: work,
        workspace,
        plan,
        heldoutDir: heldout,
        destDir,
        mode,
      });
    };
    const linkT: number[] = [];
    const copyT: number[] = [];
    const cpT: number[] = [];
    // An overlay run's: over the pristine tree, built and removed (mount and unmount included).
    const overlayT: number[] = [];
    const layered = probeOverlay(base) === null;
    for (let i = 0; i < RUNS; i++) {
      cpT.push(await time(() => execFileSync("cp", ["-a", tree, path.join(base, "cp")])));
      linkT.push(await time(env("link")));
      copyT.push(await time(env("copy")));
      if (layered)
        overlayT.push(
          await time(async () => {
            await env("overlay")();
            removeGateEnvironment(path.join(base, "env-overlay"));
          }),
        );
      removeTree(path.join(base, "cp"), path.join(base, "env-link"), path.join(base, "env-copy"));
    }
    results.push(result("gate environment, link mode", median(linkT), median(cpT), 1, "baseline: cp -a"));
    results.push(
      result("gate environment, copy mode", median(copyT), median(cpT), undefined, "baseline: cp -a"),
    );
    if (layered)
      results.push(
        result(
          "gate environment, overlay (as root)",
          median(overlayT),
          median(linkT),
          0.1,
          "built and removed; baseline: link mode",
        ),
      );
    return results;
  } finally {
    removeTree(base);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const results = await benchWorkspace();
  console.log(formatBenchTable(results));
  if (results.some((r) => !r.met)) process.exitCode = 1;
}
