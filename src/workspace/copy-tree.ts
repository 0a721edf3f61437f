import {
  chmodSync,
  chownSync,
  constants,
  copyFileSync,
  existsSync,
  lchownSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  symlinkSync,
  utimesSync,
} from "node:fs";
import path from "node:path";
import { InfrastructureError } from "../core/kernel/errors.js";
import { childPath, encodePathBytes } from "../core/kernel/path-bytes.js";

/** A directory whose mode and times are applied once its contents are in place (times in seconds). */
interface DirTimes {
  dest: string | Buffer;
  mode: number;
  atime: number;
  mtime: number;
}

/** Set-uid, set-gid and sticky: never kept in anything loopgate copies (a set-uid-root file would outlive the run). */
export const PRIVILEGED_BITS = 0o7000;

/** The permission bits loopgate keeps of a mode: rwx for owner, group and others, nothing privileged. */
export const keptMode = (mode: number): number => mode & 0o777;

/** What copyTree did. */
export interface CopyTreeResult {
  files: number;
  dirs: number;
  symlinks: number;
  /** FIFOs, sockets and devices, which are never copied. */
  skipped: number;
}

/**
 * Copies `src` to `dest` like `cp -a`: modes (without set-uid, set-gid and sticky bits) and mtimes kept, symlinks recreated as symlinks
 * (never followed), FIFOs/sockets/devices skipped, names that are not UTF-8 copied by their bytes.
 * `dest` must not exist. `filter(rel)` false
 * leaves a path (and, for a directory, its subtree) out. Synchronous calls: far faster than
 * promise-per-file for trees of small files.
 *
 * `owner`: every entry of the copy is made theirs as it is made (symlinks themselves, never followed), for a
 * copy a sandbox user is about to be handed (sandbox-owner.ts then finds nothing left to chown). The copy is
 * new and no sandbox can reach it yet, so nothing can be swapped under it on the way.
 */
export async function copyTree(
  src: string,
  dest: string,
  options?: { filter?: (rel: string) => boolean; owner?: { uid: number; gid: number } | null },
): Promise<CopyTreeResult> {
  const from = path.resolve(src);
  const to = path.resolve(dest);
  const rootStat = lstatSync(from, { throwIfNoEntry: false });
  if (!rootStat?.isDirectory()) throw new InfrastructureError(`cannot copy ${from}: not a directory`);
  if (existsSync(to) || lstatSync(to, { throwIfNoEntry: false })) {
    throw new InfrastructureError(`cannot copy ${from} to ${to}: the destination already exists`);
  }
  const rel = path.relative(from, to);
  if (rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))) {
    throw new InfrastructureError(`cannot copy ${from} into itself (${to})`);
  }
  const result: CopyTreeResult = { files: 0, dirs: 0, symlinks: 0, skipped: 0 };
  // Directory modes and times are applied after their contents: a read-only directory could not be filled otherwise.
  const dirs: DirTimes[] = [];
  mkdirSync(to, { mode: 0o700 });
  const owner = options?.owner ?? null;
  if (owner) chownSync(to, owner.uid, owner.gid);
  dirs.push({
    dest: to,
    mode: keptMode(rootStat.mode),
    atime: rootStat.atimeMs / 1000,
    mtime: rootStat.mtimeMs / 1000,
  });
  copyDir(from, to, "", options?.filter, result, dirs, owner);
  for (let i = dirs.length - 1; i >= 0; i--) {
    const d = dirs[i];
    if (!d) continue;
    chmodSync(d.dest, d.mode);
    utimesSync(d.dest, d.atime, d.mtime);
  }
  return result;
}

function copyDir(
  from: string | Buffer,
  to: string | Buffer,
  rel: string,
  filter: ((rel: string) => boolean) | undefined,
  result: CopyTreeResult,
  dirs: DirTimes[],
  owner: { uid: number; gid: number } | null,
) {
  // Raw bytes: a name that is not UTF-8 is copied byte for byte; `filter` sees its encoded path (path-bytes.ts).
  for (const raw of readdirSync(from, { encoding: "buffer" })) {
    const name = encodePathBytes(raw);
    const childRel = rel === "" ? name : `${rel}/${name}`;
    if (filter && !filter(childRel)) continue;
    const s = childPath(from, raw, name);
    const d = childPath(to, raw, name);
    const st = lstatSync(s, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isFile()) {
      // COPYFILE_EXCL: never write through something already at the destination. Mode is copied by copyfile,
      // privileged bits included (as root), so they are cleared right after.
      copyFileSync(s, d, constants.COPYFILE_EXCL);
      if (owner) chownSync(d, owner.uid, owner.gid);
      if (st.mode & PRIVILEGED_BITS) chmodSync(d, keptMode(st.mode));
      utimesSync(d, st.atimeMs / 1000, st.mtimeMs / 1000);
      result.files++;
    } else if (st.isDirectory()) {
      mkdirSync(d, { mode: 0o700 });
      if (owner) chownSync(d, owner.uid, owner.gid);
      dirs.push({ dest: d, mode: keptMode(st.mode), atime: st.atimeMs / 1000, mtime: st.mtimeMs / 1000 });
      result.dirs++;
      copyDir(s, d, childRel, filter, result, dirs, owner);
    } else if (st.isSymbolicLink()) {
      symlinkSync(readlinkSync(s, { encoding: "buffer" }), d);
      if (owner) lchownSync(d, owner.uid, owner.gid);
      lutimesSync(d, st.atimeMs / 1000, st.mtimeMs / 1000);
      result.symlinks++;
    } else {
      result.skipped++;
    }
  }
}
