import { existsSync } from "node:fs";
import { join } from "node:path";
import { InputError } from "../../core/kernel/errors.js";
import { recogniseRunner } from "../../gates/tamper/runners.js";
import type { Detection, InitRunner, RunnerEvidence } from "./detection.js";
import { busiestFirst, configFiles, dependencyDirs, outsideTests, sourceGlobs } from "./repo-layout.js";
import {
  isRepoDir,
  isRepoFile,
  outermost,
  type RepoFile,
  type RepoScan,
  readRepoText,
  topMatching,
} from "./repo-scan.js";

const SCRIPT = /\.[cm]?[jt]sx?$/;
/** A test file by its name: `x.test.js`, `x.spec.ts`, `x_test.mjs`. */
const TEST_NAME = /[._-](test|spec)\.[cm]?[jt]sx?$/;
/** Folders that hold tests by convention. */
const TEST_DIR = /^(test|tests|__tests__|spec)$/;

/** Each runner as a word in a package.json script. */
const SCRIPT_WORDS: [InitRunner, RegExp][] = [
  ["vitest", /(^|[\s/;&|(])vitest(\s|$|[;&|)])/],
  ["jest", /(^|[\s/;&|(])jest(\s|$|[;&|)])/],
  ["mocha", /(^|[\s/;&|(])_?mocha(\s|$|[;&|)])/],
  ["tape", /(^|[\s/;&|(])tape(\s|$|[;&|)])/],
  ["node-test", /(^|[\s/;&|(])node\s+(-[^;&|]*\s)?--test(\s|$|[;&|)=])/],
];
const CONFIG_FILES: [InitRunner, RegExp][] = [
  ["vitest", /^vitest\.(config|workspace)\.[cm]?[jt]s$/],
  ["jest", /^jest\.config\.([cm]?[jt]s|json)$/],
  ["mocha", /^\.mocharc(\.[a-z]+)?$/],
];

interface PackageJson {
  scripts?: Record<string, unknown>;
  dependencies?: Record<string, unknown>;
  devDependencies?: Record<string, unknown>;
  jest?: unknown;
  mocha?: unknown;
}

/** The `test` script with every script it runs by name (`npm run x`, `run-s x`), or every `test*` script. */
function testScripts(scripts: Record<string, string>): { name: string; text: string }[] {
  const start = scripts.test !== undefined ? ["test"] : Object.keys(scripts).filter((n) => /^test/.test(n));
  const out: { name: string; text: string }[] = [];
  const seen = new Set<string>();
  const queue = [...start];
  while (queue.length && out.length < 50) {
    const name = queue.shift() ?? "";
    if (seen.has(name) || scripts[name] === undefined) continue;
    seen.add(name);
    const text = scripts[name];
    out.push({ name, text });
    for (const m of text.matchAll(
      /\b(?:npm\s+run(?:-script)?|yarn(?:\s+run)?|pnpm(?:\s+run)?|bun\s+run)\s+([\w:.-]+)/g,
    ))
      if (m[1]) queue.push(m[1]);
    for (const m of text.matchAll(/\b(?:run-s|run-p|npm-run-all)((?:\s+[\w:.*-]+)+)/g))
      for (const w of (m[1] ?? "").trim().split(/\s+/))
        if (!w.startsWith("-")) queue.push(...Object.keys(scripts).filter((k) => globName(w, k)));
  }
  return out;
}

function globName(pattern: string, name: string): boolean {
  if (!pattern.includes("*")) return pattern === name;
  const re = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`);
  return re.test(name);
}

/** Every runner the repository shows, strongest evidence first: test scripts, then config files, then dependencies. */
export function nodeRunners(scan: RepoScan, pkg: PackageJson, files: readonly RepoFile[]): RunnerEvidence[] {
  const found: (RunnerEvidence & { rank: number })[] = [];
  const add = (runner: InitRunner, evidence: string, rank: number) => {
    if (!found.some((f) => f.runner === runner)) found.push({ runner, evidence, rank });
  };
  const scripts = Object.fromEntries(
    Object.entries(pkg.scripts ?? {}).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
  const hits: { runner: InitRunner; at: number; evidence: string }[] = [];
  testScripts(scripts).forEach((s, i) => {
    for (const [runner, re] of SCRIPT_WORDS) {
      const m = re.exec(s.text);
      if (m)
        hits.push({
          runner,
          at: i * 10_000 + m.index,
          evidence: `package.json scripts.${s.name}: ${JSON.stringify(s.text)}`,
        });
    }
  });
  for (const h of hits.sort((a, b) => a.at - b.at)) add(h.runner, h.evidence, 0);
  for (const [runner, re] of CONFIG_FILES) for (const name of topMatching(scan, re)) add(runner, name, 1);
  if (pkg.jest !== undefined) add("jest", 'package.json "jest" settings', 1);
  if (pkg.mocha !== undefined) add("mocha", 'package.json "mocha" settings', 1);
  const deps = { ...(pkg.dependencies ?? {}), ...(pkg.devDependencies ?? {}) };
  for (const runner of ["vitest", "jest", "mocha", "tape"] as const)
    if (Object.hasOwn(deps, runner)) add(runner, `package.json devDependencies: ${runner}`, 2);
  const nodeTest = files.find((f) => /['"]node:test['"]/.test(readRepoText(scan.root, f.path) ?? ""));
  if (nodeTest) add("node-test", `${nodeTest.path} imports node:test`, 3);
  return found.sort((a, b) => a.rank - b.rank).map(({ runner, evidence }) => ({ runner, evidence }));
}

/** The repository's JavaScript test files: in test folders, or named like tests beside the code. */
function testFiles(scan: RepoScan): RepoFile[] {
  return scan.files.filter(
    (f) =>
      SCRIPT.test(f.name) &&
      !outsideTests(f) &&
      (TEST_NAME.test(f.name) || f.dirs.some((d) => TEST_DIR.test(d))),
  );
}

/** The commonest ending of the test files (`.test.js`, `.spec.ts`, else their extension). */
function suffixOf(files: readonly RepoFile[]): string {
  const counts = new Map<string, number>();
  for (const f of files) {
    const s =
      /[._-](test|spec)\.[cm]?[jt]sx?$/.exec(f.name)?.[0] ?? /\.[cm]?[jt]sx?$/.exec(f.name)?.[0] ?? ".js";
    counts.set(s.replace(/^[_-]/, "."), (counts.get(s) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? ".test.js";
}

/** Reads a JavaScript repository: its runner, tests, configuration, dependencies and sources. */
export function detectNode(scan: RepoScan, options: { runner?: InitRunner; testDirs?: string[] }): Detection {
  let pkg: PackageJson = {};
  try {
    pkg = JSON.parse(readRepoText(scan.root, "package.json") ?? "{}") as PackageJson;
  } catch (e) {
    throw new InputError(`package.json is not valid JSON (${(e as Error).message})`, scan.root);
  }
  const tests = testFiles(scan);
  const found = nodeRunners(scan, pkg, tests);
  const chosen = options.runner ?? found[0]?.runner;
  if (!chosen)
    throw new InputError(
      `no test runner found in ${scan.root}: looked for vitest, jest, mocha, tape or \`node --test\` in package.json's test scripts and dependencies, ` +
        "vitest.config.*, jest.config.*, .mocharc*, and test files importing node:test; name one with --runner",
    );
  const folderTests = tests.filter((f) => TEST_DIR.test(f.dirs[0] ?? ""));
  const inTestDirs = outermost(
    tests.flatMap((f) => {
      const i = f.dirs.findIndex((d) => TEST_DIR.test(d));
      return i < 0 ? [] : [f.dirs.slice(0, i + 1).join("/")];
    }),
  );
  const colocated = tests.filter((f) => !inTestDirs.some((d) => f.path.startsWith(`${d}/`)));
  const suffix = suffixOf(colocated.length ? colocated : tests);
  const globbed = chosen === "mocha" || chosen === "tape";
  let testPaths: string[];
  let testGlobs: string[];
  if (options.testDirs?.length) {
    testPaths = options.testDirs.map((d) => d.replace(/\/+$/, ""));
    testGlobs = testPaths.map((d) => (isRepoDir(scan.root, d) ? `${d}/**` : d));
  } else {
    const colocatedTops = outermost(colocated.map((f) => f.dirs[0] ?? "."));
    const colocatedGlobs = colocatedTops.map((t) => (t === "." ? `**/*${suffix}` : `${t}/**/*${suffix}`));
    testGlobs = [...inTestDirs.map((d) => `${d}/**`), ...colocatedGlobs];
    testPaths = [...inTestDirs, ...(globbed ? colocatedGlobs : colocatedTops)];
  }
  if (!testPaths.length)
    throw new InputError(
      `no tests found in ${scan.root}: looked for test/, tests/, __tests__/, spec/ and files named *.test.js, *.spec.ts, …; name them with --test-dir`,
    );
  for (const p of testPaths)
    if (!/[*?]/.test(p) && !isRepoDir(scan.root, p) && !isRepoFile(scan.root, p))
      throw new InputError(`${p} is not a folder or file of the repository`, "--test-dir");
  const firstDir = busiestFirst(
    testPaths.filter((p) => isRepoDir(scan.root, p)),
    tests,
  )[0];
  if (globbed)
    testPaths = testPaths.map((p) =>
      isRepoDir(scan.root, p)
        ? `${p}/**/*${suffixOf(folderTests.filter((f) => f.path.startsWith(`${p}/`)))}`
        : p,
    );
  const launcher = launcherFor(scan, chosen);
  const heldoutPath = firstDir ? `${firstDir}/heldout` : "heldout-test";
  const excluded = new Set([...inTestDirs.filter((d) => !d.includes("/"))]);
  const isScript = (n: string) => SCRIPT.test(n);
  const isTest = (p: string) => TEST_NAME.test(p) || p.split("/").some((d) => TEST_DIR.test(d));
  return {
    language: "javascript",
    runner: chosen,
    evidence: found.filter((f) => f.runner === chosen).map((f) => f.evidence),
    others: found.filter((f) => f.runner !== chosen),
    launcher,
    testPaths,
    unittestPattern: null,
    testGlobs,
    heldoutPath,
    testSuffix: suffix,
    configFiles: configFiles(scan),
    dependencyDirs: dependencyDirs(scan, "javascript"),
    sources: sourceGlobs(scan, isScript, isTest, excluded),
    notes: scan.truncated ? ["the repository is large: only its first 20,000 entries were looked at"] : [],
  };
}

/**
 * The program a gate starts for `runner`: node itself, on the runner's own entry point in the
 * repository's node_modules (`node node_modules/vitest/vitest.mjs`). The tamper checks recognise this
 * form, and it needs nothing but node on the host: the entry point is read inside the sandbox, where a
 * shared read-only dependency folder is mounted.
 */
function launcherFor(scan: RepoScan, runner: InitRunner): string[] {
  if (runner === "node-test") return ["node", "--test"];
  const missing = () =>
    new InputError(
      `${runner} is the test runner, but node_modules/${runner} is missing: install the repository's dependencies first (npm ci) in ${scan.root}`,
    );
  let bin: unknown;
  try {
    bin = (
      JSON.parse(readRepoText(scan.root, `node_modules/${runner}/package.json`) ?? "") as { bin?: unknown }
    ).bin;
  } catch {
    bin = undefined;
  }
  const entry = typeof bin === "string" ? bin : (bin as Record<string, unknown> | undefined)?.[runner];
  const script = typeof entry === "string" ? `node_modules/${runner}/${entry.replace(/^\.\//, "")}` : null;
  const argv = script && existsSync(join(scan.root, script)) ? ["node", script] : null;
  if (!argv || recogniseRunner(argv)?.adapter.id !== runner) {
    // An entry point the tamper checks do not know: the package's command in node_modules/.bin, which they do.
    if (!existsSync(join(scan.root, "node_modules/.bin", runner))) throw missing();
    return withSubcommand(runner, [`node_modules/.bin/${runner}`]);
  }
  return withSubcommand(runner, argv);
}

function withSubcommand(runner: InitRunner, argv: string[]): string[] {
  return runner === "vitest" ? [...argv, "run"] : runner === "mocha" ? [...argv, "--recursive"] : argv;
}
