// `node bench/forgery/tasks/link-runner-deps.mjs [--force]`: gives the forgery benchmark's Vitest and Jest
// tasks the node_modules their gates run. A gate runs in its own sandbox, which mounts nothing of the host
// beyond the system folders, so the runner has to be inside the task's workspace; it is not kept in git
// (node_modules is ignored), so this links it there from this repository's own node_modules: the runner
// package and everything it depends on (less type declarations, source maps and docs), hard-linked where
// the file system allows, copied otherwise.
import {
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "../../..");
/** Each task folder here and the runner its gates start. */
const TASKS = { "vitest-roman": "vitest", "jest-roman": "jest" };

/** The folder `name` resolves to from `from`, as Node looks it up (nearest node_modules upwards). */
function resolvePackage(name, from) {
  for (let d = from; ; d = dirname(d)) {
    const p = join(d, "node_modules", name);
    if (existsSync(join(p, "package.json"))) return p;
    if (dirname(d) === d || relative(root, d).startsWith("..")) return null;
  }
}

/** The runner's package folder and every installed package it depends on (optional ones where present). */
function closure(runner) {
  const seen = new Set();
  const visit = (dir) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    for (const name of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) {
      const p = resolvePackage(name, dir);
      if (p) visit(p);
    }
  };
  const start = resolvePackage(runner, root);
  if (!start) throw new Error(`${runner} is not installed in ${root}/node_modules (run npm ci there)`);
  visit(start);
  // A package nested inside another one's node_modules comes along with its parent.
  const dirs = [...seen].sort();
  return dirs.filter((d) => !dirs.some((o) => o !== d && d.startsWith(`${o}/`)));
}

/** Type declarations, source maps and docs: never loaded by a runner, and a third of the files to copy. */
const UNUSED = /\.(d\.[cm]?ts|map|md|markdown)$/;

function linkTree(from, to) {
  if (UNUSED.test(from)) return;
  const st = lstatSync(from);
  if (st.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
  else if (st.isDirectory()) {
    mkdirSync(to, { recursive: true });
    for (const name of readdirSync(from)) linkTree(join(from, name), join(to, name));
  } else {
    try {
      linkSync(from, to);
    } catch {
      copyFileSync(from, to);
    }
  }
}

/**
 * Makes `dest` a node_modules holding `runner` and every package it needs, linked from this repository's
 * own node_modules (less type declarations, source maps and docs), with the runner's bin links in .bin.
 * Also used by the tamper-check tests (test/gates/tamper/runner-fixtures.ts). Returns how many packages.
 */
export function linkRunnerModules(runner, dest) {
  const packages = closure(runner);
  for (const dir of packages) linkTree(dir, join(dest, relative(join(root, "node_modules"), dir)));
  const pkg = JSON.parse(readFileSync(join(root, "node_modules", runner, "package.json"), "utf8"));
  const bins = typeof pkg.bin === "string" ? { [runner]: pkg.bin } : (pkg.bin ?? {});
  mkdirSync(join(dest, ".bin"), { recursive: true });
  for (const [name, file] of Object.entries(bins))
    symlinkSync(join("..", runner, file), join(dest, ".bin", name));
  return packages.length;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const force = process.argv.includes("--force");
  for (const [task, runner] of Object.entries(TASKS)) {
    const dest = join(here, task, "repo", "node_modules");
    if (existsSync(dest) && !force) continue;
    rmSync(dest, { recursive: true, force: true });
    const n = linkRunnerModules(runner, dest);
    process.stdout.write(`${relative(root, dest)}: ${runner} and ${n - 1} packages it needs\n`);
  }
}
