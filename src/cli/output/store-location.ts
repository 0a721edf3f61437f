import { statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { InputError } from "../../core/kernel/errors.js";
import { type StoreLocation, storeLocation } from "../../store/open-store.js";

/** The folder name loopgate keeps a store in, and looks for walking up. */
export const STORE_FOLDER = ".loopgate";

/** How the store of a command was chosen (for the hints: a store the default rule finds needs no flag). */
export type StoreSource = "flag" | "found" | "env" | "default";

/** A store location and the rule that chose it. */
export type LocatedStore = StoreLocation & { source: StoreSource };

/** Whether `dir` is a folder store: a folder that holds an `events.db` (whatever its state). */
function isFolderStore(dir: string): boolean {
  try {
    if (!statSync(dir).isDirectory()) return false;
    statSync(join(dir, "events.db"));
    return true;
  } catch {
    return false;
  }
}

/**
 * The nearest folder store walking up from `cwd` to the filesystem root, as git finds `.git`: a
 * `.loopgate/` folder holding an `events.db`. Anything else named `.loopgate` (a file, a folder without a
 * log such as the local run folder beside a PostgreSQL log) is passed over and the walk goes on.
 */
export function nearestStore(cwd: string): string | null {
  let dir = resolve(cwd);
  for (;;) {
    const candidate = join(dir, STORE_FOLDER);
    if (isFolderStore(candidate)) return candidate;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/**
 * THE rule for where every command keeps its log: `--store` if given; else the nearest `.loopgate/`
 * walking up from the current folder; else `$LOOPGATE_STORE`; else `./.loopgate/` (created by the commands
 * that record). An empty `--store` or `LOOPGATE_STORE` is refused (it is a mistake, never "the default"),
 * and so is a malformed `LOOPGATE_STORE` (an unknown scheme) even where a found store comes first.
 * A PostgreSQL store keeps its run folders in `./.loopgate/` of the current folder.
 */
export function locateStore(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): LocatedStore {
  const fromEnv = env.LOOPGATE_STORE;
  if (flag !== undefined && flag.trim() === "")
    throw new InputError(
      "is empty; give a folder or postgres://USER@HOST[:PORT]/DATABASE, or leave --store out (then: the nearest .loopgate/ walking up, else $LOOPGATE_STORE, else ./.loopgate/)",
      "--store",
    );
  if (fromEnv !== undefined && fromEnv.trim() === "")
    throw new InputError(
      "is set but empty; unset it, or set it to a folder or postgres://USER@HOST[:PORT]/DATABASE",
      "LOOPGATE_STORE",
    );
  const local = resolve(cwd, STORE_FOLDER);
  const at = (value: string, source: StoreSource): LocatedStore => {
    const where = source === "env" ? fromEnvVariable(value, local) : storeLocation(value, local);
    // A relative folder means the given cwd's (the same as process.cwd() but for tests).
    if (where.kind === "postgres") return { ...where, source };
    const dir = resolve(cwd, value);
    return { kind: "folder", dir, label: dir, source };
  };
  if (flag !== undefined) return at(flag, "flag");
  // A malformed $LOOPGATE_STORE is refused wherever it is read from, even where a found store wins.
  const fromEnvStore = fromEnv === undefined ? undefined : at(fromEnv, "env");
  const found = nearestStore(cwd);
  if (found) return at(found, "found");
  if (fromEnvStore) return fromEnvStore;
  return at(local, "default");
}

/** storeLocation for the value of $LOOPGATE_STORE: a refusal names the variable, not --store. */
function fromEnvVariable(value: string, local: string): StoreLocation {
  try {
    return storeLocation(value, local);
  } catch (e) {
    if (e instanceof InputError && e.where === "--store")
      throw new InputError(e.message.replace(/^--store: /, ""), "LOOPGATE_STORE", { cause: e });
    throw e;
  }
}

/** A shell word for `s` (quoted only when it needs to be). */
export const shellWord = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`);

/**
 * The store as a person reads it: the redacted URL of a PostgreSQL store; a folder relative to `cwd`
 * (`./.loopgate`) when it is inside it, else its absolute path.
 */
export function storeDisplay(where: StoreLocation, cwd: string = process.cwd()): string {
  if (where.kind === "postgres") return where.label;
  const base = resolve(cwd);
  const rel = relative(base, where.dir);
  if (rel === "") return ".";
  return rel.startsWith("..") || isAbsolute(rel) || dirname(base) === base ? where.dir : `./${rel}`;
}

/**
 * What a printed hint adds so that it finds the same store when pasted in the same folder with the same
 * environment: nothing when the default rule finds it there (now: a run may just have created the log),
 * else ` --store WHERE`. A PostgreSQL URL is shown with its password masked.
 */
export function storeHintArg(
  where: StoreLocation,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string {
  let again: StoreLocation | null = null;
  try {
    again = locateStore(undefined, env, cwd);
  } catch {
    again = null;
  }
  const same =
    again !== null &&
    again.kind === where.kind &&
    (where.kind === "postgres"
      ? again.kind === "postgres" && again.url === where.url
      : again.dir === where.dir);
  return same ? "" : ` --store ${shellWord(storeDisplay(where, cwd))}`;
}
