import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";

/** The PATH every sandboxed process gets: system directories only, never the caller's. */
export const SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * A scrubbed environment: a fixed base plus only the variables the user allowlisted by name.
 * Nothing else of the caller's environment (tokens, keys, cloud credentials) passes.
 */
export function scrubbedEnv(options: {
  home: string;
  allow?: readonly string[];
  extra?: Readonly<Record<string, string>>;
  from?: NodeJS.ProcessEnv;
}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: SANDBOX_PATH,
    HOME: options.home,
    TMPDIR: "/tmp",
    LANG: "C.UTF-8",
    LC_ALL: "C.UTF-8",
    TZ: "UTC",
    NO_COLOR: "1",
  };
  const from = options.from ?? process.env;
  for (const name of options.allow ?? []) {
    const v = from[name];
    if (v !== undefined) env[name] = v;
  }
  return { ...env, ...options.extra };
}

/** Finds `program` the way execvp would with `path`; relative paths are taken from `cwd`. Null if absent. */
export function resolveProgram(program: string, cwd: string, path = SANDBOX_PATH): string | null {
  const candidates = program.includes("/")
    ? [isAbsolute(program) ? program : resolve(cwd, program)]
    : path.split(delimiter).map((dir) => join(dir, program));
  for (const c of candidates) {
    try {
      if (statSync(c).isFile()) {
        accessSync(c, constants.X_OK);
        return c;
      }
    } catch {
      // not this one
    }
  }
  return null;
}

/** Where loopgate looks for the system tools it runs itself (prlimit, unshare, mount, setpriv), as root too. */
export const SYSTEM_TOOL_PATH = "/usr/bin:/bin:/usr/sbin:/sbin";

const systemTools = new Map<string, string>();

/**
 * resolveProgram of a system tool in SYSTEM_TOOL_PATH, remembered once found: every sandbox starts
 * several of them, and a lookup is a few stat calls. A tool not found is looked up again next time.
 */
export function systemTool(name: string): string | null {
  const known = systemTools.get(name);
  if (known) return known;
  const found = resolveProgram(name, "/", SYSTEM_TOOL_PATH);
  if (found) systemTools.set(name, found);
  return found;
}
