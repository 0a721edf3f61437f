import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveProgram } from "../sandbox/environment.js";

/** The package's root folder (where package.json names loopgate). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (dir !== "/") {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, "utf8")).name === "loopgate") return dir;
    dir = dirname(dir);
  }
  throw new Error("cannot find loopgate's package.json above the CLI");
}

const quote = (w: string) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`);

/**
 * How the user can run loopgate again from where they are, for the hints the CLI prints: `loopgate` when
 * it is on PATH (npm link, a global install), `npx loopgate` inside the package folder, and otherwise
 * the launcher by its path, which works from anywhere.
 */
export function cliName(
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
  root: string = packageRoot(),
): string {
  if (resolveProgram("loopgate", cwd, env.PATH ?? "")) return "loopgate";
  const rel = relative(root, cwd);
  if (!rel.startsWith("..") && !rel.startsWith("/")) return "npx loopgate";
  return `node ${quote(join(root, "bin", "loopgate.js"))}`;
}
