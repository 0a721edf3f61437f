/**
 * `npm run check` runs this: it fails on any import cycle in src/, any import up (or across) the
 * layer list of docs/architecture.md, any import up the rooms inside a layer, any `export *`, and any
 * test folder that mirrors no source folder. The rules are in import-rules.ts; known remaining violations, each with the
 * one who removes it, in import-allowlist.ts. Imports are read with the TypeScript compiler's own
 * pre-processor (static, dynamic and type-only imports and re-exports), resolved like NodeNext does.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { allowedImports } from "./import-allowlist.js";
import { checkImports, type ImportGraph } from "./import-rules.js";
import { checkRooms, unmirroredTests } from "./room-rules.js";

/** The relative imports of one source text, as written (`./events.js`, `../core/task.js`). */
export function importSpecifiers(text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  return info.importedFiles.map((f) => f.fileName).filter((s) => s.startsWith("./") || s.startsWith("../"));
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** `./x.js` from `src/a/b.ts` → `src/a/x.ts` (or `x/index.ts`); null when nothing is there. */
function resolveImport(root: string, fromFile: string, specifier: string): string | null {
  const base = resolve(dirname(join(root, fromFile)), specifier);
  const candidates = [
    base.replace(/\.js$/, ".ts"),
    base.replace(/\.js$/, ".tsx"),
    base,
    join(base, "index.ts"),
  ];
  const hit = candidates.find((c) => existsSync(c) && statSync(c).isFile());
  return hit ? relative(root, hit) : null;
}

/** The files of `src/` that hold an `export *`. */
export function exportStarFiles(root: string): string[] {
  return sourceFiles(join(root, "src"))
    .filter((path) => /^\s*export\s*\*/m.test(readFileSync(path, "utf8")))
    .map((path) => relative(root, path));
}

/** The folders (relative to the repository) that hold test files. */
export function testFolders(root: string): string[] {
  const dirs = new Set<string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.test\.ts$/.test(name)) dirs.add(relative(root, dir));
    }
  };
  walk(join(root, "test"));
  return [...dirs].sort();
}

/** The import graph of `src/` under a repository root. Unresolvable relative imports are errors too. */
export function buildGraph(root: string): { graph: ImportGraph; unresolved: string[] } {
  const graph = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const path of sourceFiles(join(root, "src"))) {
    const file = relative(root, path);
    const tos: string[] = [];
    for (const spec of importSpecifiers(readFileSync(path, "utf8"))) {
      const to = resolveImport(root, file, spec);
      if (to === null) unresolved.push(`${file}: cannot resolve ${spec}`);
      else if (to.startsWith("src/")) tos.push(to);
      else unresolved.push(`${file} → ${to}: src/ imports a file outside src/`);
    }
    graph.set(file, [...new Set(tos)]);
  }
  return { graph, unresolved };
}

function main(): number {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const { graph, unresolved } = buildGraph(root);
  const problems = [
    ...unresolved,
    ...checkImports(graph, allowedImports).map((v) => v.message),
    ...checkRooms(graph, exportStarFiles(root)).map((v) => v.message),
    ...unmirroredTests(testFolders(root), (dir) => existsSync(join(root, dir))).map((v) => v.message),
  ];
  if (problems.length === 0) {
    const allowed = allowedImports.length
      ? ` (${allowedImports.length} known, allowed in import-allowlist.ts)`
      : "";
    console.log(
      `imports: ${graph.size} files in src/, no cycle, nothing imports up the layers or up the rooms inside them, every test folder mirrors a source folder${allowed}`,
    );
    return 0;
  }
  console.error(
    `imports: ${problems.length} problem(s) in src/ (rules: scripts/import-rules.ts, scripts/room-rules.ts)`,
  );
  for (const p of problems) console.error(`  ${p}`);
  return 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main();
