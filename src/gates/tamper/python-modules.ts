import { statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";

/** A dotted name split into the module file that defines it and the names inside that module. */
export interface ModuleSplit {
  /** The module's own dotted name (`tests.test_x`). */
  module: string;
  /** Its file relative to `cwd`, `/`-separated (`tests/test_x.py`, `pkg/__init__.py`). */
  file: string;
  /** Classes and the method after the module (`["Case", "test_y"]`), possibly empty. */
  rest: string[];
  /** Whether the module was found on disk (false: a guess that the last name is a class). */
  found: boolean;
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

const posix = (p: string) => p.split(sep).join("/");

function fileOf(root: string, parts: readonly string[]): string | null {
  const base = join(root, ...parts);
  if (isFile(`${base}.py`)) return `${base}.py`;
  const init = join(base, "__init__.py");
  return isFile(init) ? init : null;
}

/**
 * Splits `pkg.mod.Class.test_x` at the longest prefix that is a module file under one of `roots`
 * (tried in order), so `MODULE.CLASS` is never taken for a module. When no prefix exists on disk,
 * guesses that the last name is a class and the rest the module.
 */
export function splitDotted(dotted: string, roots: readonly string[], cwd: string): ModuleSplit {
  const parts = dotted.split(".");
  for (const root of roots)
    for (let i = parts.length; i >= 1; i--) {
      const file = fileOf(root, parts.slice(0, i));
      if (file)
        return {
          module: parts.slice(0, i).join("."),
          file: posix(relative(cwd, file)),
          rest: parts.slice(i),
          found: true,
        };
    }
  const module = parts.slice(0, Math.max(1, parts.length - 1));
  return {
    module: module.join("."),
    file: posix(relative(cwd, `${join(roots[0] ?? cwd, ...module)}.py`)),
    rest: parts.slice(module.length),
    found: false,
  };
}

/** The file of a dotted name that is a module as a whole (one that failed to import, or was skipped). */
export function moduleFile(dotted: string, roots: readonly string[], cwd: string): string {
  const parts = dotted.split(".");
  for (const root of roots) {
    const file = fileOf(root, parts);
    if (file) return posix(relative(cwd, file));
  }
  return posix(relative(cwd, `${join(roots[0] ?? cwd, ...parts)}.py`));
}

/** `tests/test_x.py` (relative to cwd) → `tests.test_x`, the name unittest gives a path argument; null when it is no module path. */
export function pathToModule(path: string, cwd: string): string | null {
  if (!path.toLowerCase().endsWith(".py")) return null;
  const rel = posix(relative(cwd, resolve(cwd, path)));
  if (rel.startsWith("../") || rel.startsWith("/")) return null;
  return rel.slice(0, -3).split("/").join(".");
}
