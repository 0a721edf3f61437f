import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let found: string | null = null;

/**
 * The package's root folder: the nearest folder above this module whose package.json names loopgate.
 * Found by walking up rather than by a fixed `../..`, because the same code runs from src/ (tests),
 * dist/<layer>/ (the compiled modules) and dist/loopgate.cjs (the one-file bundle the CLI starts from).
 */
export function packageRoot(): string {
  if (found) return found;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, "package.json");
    if (
      existsSync(pkg) &&
      (JSON.parse(readFileSync(pkg, "utf8")) as { name?: unknown }).name === "loopgate"
    ) {
      found = dir;
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error("cannot find loopgate's package.json above its code");
    dir = up;
  }
}

/** A path inside the package: `packagePath("node_modules", ".bin", "claude")`. */
export const packagePath = (...parts: string[]) => join(packageRoot(), ...parts);
