import { isRepoDir, type RepoFile, type RepoScan } from "./repo-scan.js";

/** Top-level folders that hold no deliverable code: documentation, examples, benchmarks, fixtures, output. */
const NOT_SOURCE =
  /^(docs?|examples?|samples?|bench(marks?)?|fixtures?|coverage|dist|build|out|tmp|node_modules|venv|site|htmlcov|typings?-tests?|scripts)$/i;

/** Top-level folders whose test-like files are not the project's tests: benchmarks, examples, docs. */
const NOT_TESTS = /^(docs?|examples?|samples?|bench(marks?)?)$/i;

/** Whether a file lies in a top-level folder of benchmarks, examples or docs. */
export function outsideTests(f: RepoFile): boolean {
  return NOT_TESTS.test(f.dirs[0] ?? "");
}

/** `paths` (folders) ordered by how many of `files` each holds, most first; ties keep their order. */
export function busiestFirst(paths: readonly string[], files: readonly RepoFile[]): string[] {
  const count = (p: string) => files.filter((f) => p === "." || f.path.startsWith(`${p}/`)).length;
  return [...paths].sort((a, b) => count(b) - count(a));
}

/** The configuration files a task protects when present at the repository's top: runner, compiler and dependency settings. */
const CONFIG =
  /^(package\.json|package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|pnpm-workspace\.yaml|bun\.lockb?|tsconfig(\..+)?\.json|jsconfig\.json|(vitest|vite|jest|babel|vitest\.workspace)\.config\.[cm]?[jt]s|vitest\.workspace\.[cm]?[jt]s|\.babelrc(\.[a-z]+)?|\.mocharc(\.[a-z]+)?|\.nycrc(\.[a-z]+)?|\.c8rc(\.[a-z]+)?|\.taprc|\.swcrc|pytest\.ini|pyproject\.toml|setup\.cfg|setup\.py|tox\.ini|noxfile\.py|conftest\.py|\.coveragerc|requirements[^/]*\.txt|Pipfile(\.lock)?|poetry\.lock|uv\.lock)$/;

/** The existing top-level configuration files of the repository. */
export function configFiles(scan: RepoScan): string[] {
  return scan.top.filter((t) => !t.dir && CONFIG.test(t.name)).map((t) => t.name);
}

/** The dependency folders present at the top: node_modules for JavaScript, a virtualenv for Python. */
export function dependencyDirs(scan: RepoScan, language: "javascript" | "python"): string[] {
  const names = language === "javascript" ? ["node_modules"] : [".venv", "venv"];
  return names.filter((n) => isRepoDir(scan.root, n));
}

/**
 * The deliverable globs: each top-level folder holding source files (`lib/**`), and each top-level
 * source file that is neither configuration nor a test; test folders and `excluded` never count.
 */
export function sourceGlobs(
  scan: RepoScan,
  isSource: (name: string) => boolean,
  isTest: (path: string) => boolean,
  excluded: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  for (const t of scan.top) {
    if (t.name.startsWith(".") || excluded.has(t.name) || CONFIG.test(t.name)) continue;
    if (t.dir) {
      if (NOT_SOURCE.test(t.name)) continue;
      const holds = scan.files.some((f) => f.dirs[0] === t.name && isSource(f.name) && !isTest(f.path));
      if (holds) out.push(`${t.name}/**`);
    } else if (isSource(t.name) && !isTest(t.name) && !/\.config\.[cm]?[jt]s$/.test(t.name)) {
      out.push(t.name);
    }
  }
  return out;
}
