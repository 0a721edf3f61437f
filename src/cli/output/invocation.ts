import { realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { packageRoot } from "../../core/kernel/package-root.js";
import { resolveProgram } from "../../sandbox/environment.js";
import { shellWord } from "./store-location.js";

export { packageRoot };

/** The first word of a shell command line, without the quotes npm puts around it (`'loopgate' 'run'`). */
const firstWord = (line: string | undefined) =>
  line
    ?.trim()
    .split(/\s+/)[0]
    ?.replace(/^['"]|['"]$/g, "");

const realOrNull = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
};

/** `p` as the user may type it in `cwd`: relative when it lies below `cwd` (not the root), else absolute. */
const typed = (p: string, cwd: string) => {
  const rel = relative(cwd, p);
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) || dirname(cwd) === cwd ? p : rel;
};

/**
 * How the user started loopgate, for the hints the CLI prints, so that a hint pasted in the same folder
 * runs the same loopgate:
 * - `npx loopgate` under `npx loopgate` / `npm exec loopgate` / an npm script that runs `loopgate` (npm
 *   puts its own `.bin` folders on the child's PATH, which the user's shell does not have);
 * - `loopgate` when it was started by that name and the `loopgate` on PATH is this same package's launcher
 *   (real paths compared), else the link it was started by;
 * - `node PATH/bin/loopgate.js` when started by the launcher's path (relative to the folder when below it),
 *   and when the CLI runs inside another program (a test calling `main`) with no loopgate of its own on PATH.
 */
export function cliName(
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
  root: string = packageRoot(),
  argv1: string | undefined = process.argv[1],
): string {
  if (env.npm_command && firstWord(env.npm_lifecycle_script) === "loopgate") return "npx loopgate";
  const launcher = join(root, "bin", "loopgate.js");
  const ours = realOrNull(launcher);
  const onPath = resolveProgram("loopgate", cwd, env.PATH ?? "");
  const pathIsOurs = onPath !== null && ours !== null && realOrNull(onPath) === ours;
  const started = argv1 === undefined ? null : resolve(cwd, argv1);
  if (started !== null && ours !== null && realOrNull(started) === ours) {
    if (basename(started) === "loopgate.js") return `node ${shellWord(typed(started, cwd))}`;
    // Started through a link: by its name when PATH finds this same loopgate, else by its path.
    if (basename(started) === "loopgate" && pathIsOurs) return "loopgate";
    const link = typed(started, cwd);
    return shellWord(link.startsWith("/") ? link : `./${link}`);
  }
  if (pathIsOurs) return "loopgate";
  return `node ${shellWord(typed(launcher, cwd))}`;
}
