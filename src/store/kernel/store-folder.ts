import { accessSync, constants, existsSync, readdirSync, type Stats, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { StoreError } from "./store-errors.js";

/** What a store folder holds before its log is opened. */
export interface StoreFolder {
  dir: string;
  log: string;
  /** Whether events.db exists and has content (a 0-byte file is no log). */
  hasLog: boolean;
  /** The run folders under runs/, by name. */
  runFolders: string[];
}

const named = (folders: readonly string[]) =>
  `${folders.slice(0, 5).join(", ")}${folders.length > 5 ? `, … (${folders.length} in all)` : ""}`;

/**
 * Looks at a store folder before anything opens it, and refuses what would lose or misread records:
 * a file where the folder should be, a log that is a folder, a missing or 0-byte log beside run folders
 * (a new log would silently start over them), and, when `write` is set, a folder that cannot be written.
 */
export function inspectStoreFolder(dir: string, write: boolean): StoreFolder {
  const log = join(dir, "events.db");
  const dirStat = statOrRefuse(dir);
  if (dirStat && !dirStat.isDirectory())
    throw new StoreError(
      dir,
      "is a file, not a folder",
      "pass --store a folder (loopgate keeps events.db and runs/ inside it), or move the file away",
    );
  const logStat = statOrRefuse(log);
  if (logStat && !logStat.isFile())
    throw new StoreError(log, "is not a file", "move it away; events.db must be loopgate's SQLite log");
  const runsDir = join(dir, "runs");
  let runFolders: string[] = [];
  if (existsSync(runsDir))
    try {
      runFolders = readdirSync(runsDir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
    } catch (e) {
      throw new StoreError(
        runsDir,
        `cannot be read (${(e as NodeJS.ErrnoException).code})`,
        "check its permissions",
        {
          cause: e,
        },
      );
    }
  const hasLog = logStat !== undefined && logStat.size > 0;
  if (!hasLog && runFolders.length > 0)
    throw new StoreError(
      log,
      `${logStat ? "is empty (0 bytes)" : "is missing"} but ${runFolders.length} run folder(s) exist in ${runsDir} (${named(runFolders)})`,
      "nothing was changed; restore events.db from a backup (or point --store at the folder that holds it); loopgate will not start a new log over recorded runs",
    );
  if (write && dirStat) {
    const unwritable = [dir, ...(logStat ? [log] : [])].find((p) => !writable(p));
    if (unwritable)
      throw new StoreError(
        unwritable,
        "is read-only",
        "this command records events: make it writable, or pass --store a writable folder (runs, status and events only read a read-only store)",
      );
  }
  return { dir, log, hasLog, runFolders };
}

/** A log that opened but holds no run while run folders exist: its records were lost; refuse it. */
export function refuseEmptyLog(folder: StoreFolder, runStreams: number): void {
  if (runStreams > 0 || folder.runFolders.length === 0) return;
  throw new StoreError(
    folder.log,
    `holds no runs but ${folder.runFolders.length} run folder(s) exist in ${join(folder.dir, "runs")} (${named(folder.runFolders)})`,
    "nothing was changed; restore events.db from a backup, or point --store at the folder that holds their log",
  );
}

/**
 * `statSync` of a path that may be absent; a path that cannot even be looked at (a file on the way,
 * `--store afile/sub`, or a folder on the way that may not be searched) is a StoreError naming it.
 */
function statOrRefuse(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOTDIR")
      throw new StoreError(
        path,
        `cannot be a folder: ${fileOnTheWay(path) ?? "a part of the path"} is a file`,
        "pass --store a folder (loopgate keeps events.db and runs/ inside it) whose parents are folders",
        { cause: e },
      );
    throw new StoreError(
      path,
      `cannot be looked at (${code ?? String(e)})`,
      "check the permissions of its folders",
      {
        cause: e,
      },
    );
  }
}

/** The nearest existing ancestor of `path` when it is not a folder (what makes the path impossible). */
function fileOnTheWay(path: string): string | undefined {
  for (let p = dirname(path); p !== dirname(p); p = dirname(p)) {
    let st: Stats | undefined;
    try {
      st = statSync(p, { throwIfNoEntry: false });
    } catch {
      continue; // itself below that file: look further up
    }
    if (st) return st.isDirectory() ? undefined : p;
  }
  return undefined;
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
