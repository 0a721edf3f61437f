import { createHash, type Hash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ownedAndClosed } from "./owned-folder.js";

/**
 * What the sandbox sees of the host's `/etc`: what name resolution, TLS roots, locale, the dynamic linker
 * and the runtimes need — never the whole folder, which holds `shadow`, `ssh` host keys, `ssl/private`,
 * service configurations with passwords and package-manager credentials (`npmrc`, `pip.conf`).
 * docs/explanation/sandbox.md lists it; runtimes' own folders (RUNTIME_ETC) are added as found.
 */
export const SANDBOX_ETC: readonly string[] = [
  "alternatives",
  "ca-certificates",
  "ca-certificates.conf",
  "debian_version",
  "fonts",
  "gai.conf",
  "gitconfig",
  "group",
  "host.conf",
  "hostname",
  "hosts",
  "inputrc",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "locale.alias",
  "locale.gen",
  "localtime",
  "magic",
  "magic.mime",
  "mime.types",
  "mtab",
  "networks",
  "nsswitch.conf",
  "os-release",
  "passwd",
  "perl",
  "protocols",
  "python3",
  "python3.11",
  "resolv.conf",
  "rpc",
  "services",
  "shells",
  "ssl/certs",
  "ssl/openssl.cnf",
  "terminfo",
  "timezone",
];

/** Runtimes keep their configuration in `/etc/<name>…` folders (`java-17-openjdk`, `python3.11`, `ruby`). */
const RUNTIME_ETC = /^(java|python|perl|ruby|php|lua|guile|R$)/;

let runtimeEtc: string[] | null = null;
function runtimeEtcEntries(): string[] {
  if (runtimeEtc) return runtimeEtc;
  try {
    runtimeEtc = readdirSync("/etc").filter((n) => RUNTIME_ETC.test(n));
  } catch {
    runtimeEtc = [];
  }
  return runtimeEtc;
}

/** The names under /etc a sandbox sees: the curated ones, the runtimes' and a spec's `extra`, sorted. */
function etcNames(extra: readonly string[]): string[] {
  return [...new Set([...SANDBOX_ETC, ...runtimeEtcEntries(), ...extra])].sort();
}

/**
 * bwrap arguments for a read-only `/etc` holding only the curated entries (and a spec's `extra` ones).
 *
 * Mounted as one folder: a copy of the entries everyone may read, made once per state of those entries
 * (see etcCopy). bwrap reads the whole mount table back after each mount it makes, so the ~40 mounts of
 * one bind per entry were about a third of what starting a sandbox costs. An entry the copy does not hold
 * (one that not everyone may read, such as a `shadow` a task adds) is bound over an empty stand-in, as
 * before; where no copy can be kept, every entry is bound (etcBinds).
 */
export function curatedEtc(extra: readonly string[]): string[] {
  const names = etcNames(extra);
  const copy = etcCopy(names);
  if (!copy) return etcBinds(names);
  const args = ["--ro-bind", copy.dir, "/etc"];
  for (const name of copy.bound) args.push("--ro-bind", `/etc/${name}`, `/etc/${name}`);
  return args;
}

/** One bind per entry on a read-only tmpfs: where no copy can be kept. */
function etcBinds(names: readonly string[]): string[] {
  const args = ["--tmpfs", "/etc"];
  for (const name of names) {
    const host = `/etc/${name}`;
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(host);
    } catch {
      continue;
    }
    if (name.includes("/")) args.push("--dir", host.slice(0, host.lastIndexOf("/")));
    if (st.isSymbolicLink()) args.push("--symlink", readlinkSync(host), host);
    else args.push("--ro-bind", host, host);
  }
  args.push("--remount-ro", "/etc");
  return args;
}

/** A copy of the curated entries, and the names it holds only as stand-ins, to be bound over. */
export interface EtcCopy {
  dir: string;
  bound: readonly string[];
}

/** For tests: another folder in place of /etc, another base folder (null: none), another clock. */
export interface EtcCopyOptions {
  from?: string;
  base?: string | null;
  now?: number;
}

/** How long a process trusts a copy without looking at /etc again. */
const RECHECK_MS = 2_000;
/** A copy no longer current is removed once it is this old (a sandbox may still have it mounted). */
const STALE_COPY_MS = 24 * 3600_000;

let lastCopy: { key: string; at: number; copy: EtcCopy } | null = null;

/**
 * The folder holding a copy of the entries `names` (under /etc) as they are now: `<base>/etc-<digest>`,
 * the digest taken over every name, type, inode, mode, owner, size and change time in them (listing each
 * folder, stat-ing what is not a symlink: a symlink replaced or added changes its folder's times). Made
 * before it is named, so a process that finds the name finds a whole copy; a later change to /etc gives
 * another digest, so another copy. An entry holding anything not everyone may read is not copied (its
 * copy would be one more place a secret lives): the copy holds an empty stand-in and `bound` names it.
 * Null when no base folder can be kept safely or the copy fails: the caller binds every entry.
 */
export function etcCopy(names: readonly string[], options: EtcCopyOptions = {}): EtcCopy | null {
  const from = options.from ?? "/etc";
  const key = `${from}\0${options.base}\0${names.join("\0")}`;
  const now = options.now ?? Date.now();
  if (lastCopy?.key === key && now - lastCopy.at < RECHECK_MS && existsSync(lastCopy.copy.dir))
    return lastCopy.copy;
  try {
    const base = options.base === undefined ? copyBase() : options.base;
    if (!base) return null;
    const hash = createHash("sha256");
    const bound: string[] = [];
    const present: string[] = [];
    for (const name of names) {
      const state = entryState(`${from}/${name}`, hash);
      if (state === "absent") continue;
      present.push(name);
      if (state === "private") bound.push(name);
    }
    hash.update(`bound\0${bound.join("\0")}`);
    const dir = join(base, `etc-${hash.digest("hex").slice(0, 32)}`);
    if (!existsSync(dir)) makeCopy(from, base, dir, present, new Set(bound));
    const copy = { dir, bound };
    lastCopy = { key, at: now, copy };
    return copy;
  } catch {
    return null;
  }
}

/**
 * Feeds `path`'s state (recursively) to `hash`: "absent", "private" when something in it is not readable
 * by everyone (a file without o+r, a folder without o+rx), else "public".
 */
function entryState(path: string, hash: Hash): "absent" | "private" | "public" {
  const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  if (!st) {
    hash.update(`${path}\0-\n`);
    return "absent";
  }
  hash.update(`${path}\0${st.ino} ${st.mode} ${st.uid} ${st.gid} ${st.size} ${st.mtimeNs} ${st.ctimeNs}\n`);
  if (st.isSymbolicLink()) return "public";
  if (st.isFile()) return (st.mode & 0o004n) !== 0n ? "public" : "private";
  if (!st.isDirectory()) return "private";
  let state: "private" | "public" = (st.mode & 0o005n) === 0o005n ? "public" : "private";
  for (const e of readdirSync(path, { withFileTypes: true })) {
    const child = `${path}/${e.name}`;
    if (e.isSymbolicLink()) hash.update(`${child}\0l\n`);
    else if (entryState(child, hash) === "private") state = "private";
  }
  return state;
}

/** Writes the copy into a fresh folder beside `dir`, then renames it to `dir` (another process may win). */
function makeCopy(
  from: string,
  base: string,
  dir: string,
  names: readonly string[],
  bound: ReadonlySet<string>,
): void {
  const tmp = mkdtempSync(`${dir}.tmp-`);
  try {
    const root = process.geteuid?.() === 0;
    for (const name of names) {
      const source = `${from}/${name}`;
      const to = `${tmp}/${name}`;
      if (name.includes("/")) mkdirSync(to.slice(0, to.lastIndexOf("/")), { recursive: true, mode: 0o755 });
      if (bound.has(name)) {
        if (lstatSync(source).isDirectory()) mkdirSync(to, { mode: 0o555 });
        else writeFileSync(to, "", { mode: 0o444 });
      } else copyEntry(source, to, root);
    }
    chmodSync(tmp, 0o755);
    try {
      renameSync(tmp, dir);
    } catch (e) {
      if (!existsSync(dir)) throw e;
      rmSync(tmp, { recursive: true, force: true });
    }
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  removeStaleCopies(base, dir);
}

/** Copies one entry as it is: symlinks verbatim, modes without set-id bits, owners when root. */
function copyEntry(from: string, to: string, root: boolean): void {
  const st = lstatSync(from);
  if (st.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
  else if (st.isDirectory()) {
    mkdirSync(to, { mode: 0o700 });
    for (const name of readdirSync(from)) copyEntry(`${from}/${name}`, `${to}/${name}`, root);
    chmodSync(to, st.mode & 0o777);
  } else if (st.isFile()) {
    copyFileSync(from, to);
    chmodSync(to, st.mode & 0o777);
  } else return; // a device, FIFO or socket under /etc: not shown
  if (root) lchownSync(to, st.uid, st.gid);
}

function removeStaleCopies(base: string, current: string): void {
  for (const name of readdirSync(base)) {
    const p = join(base, name);
    if (p === current || !name.startsWith("etc-")) continue;
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (st?.isDirectory() && Date.now() - st.mtimeMs > STALE_COPY_MS)
      rmSync(p, { recursive: true, force: true });
  }
}

/**
 * Where copies are kept: as root, /run/loopgate-etc (root's, 0755: the sandbox user mounts it directly,
 * and it holds only what everyone may read anyway); otherwise a 0700 folder of the user's in the temp
 * folder. Null when that folder is not safely the user's own (someone else's, a symlink, writable by others).
 */
function copyBase(): string | null {
  const uid = process.geteuid?.() ?? -1;
  if (uid < 0) return null;
  const parent = uid === 0 ? "/run" : tmpdir();
  const base = uid === 0 ? join(parent, "loopgate-etc") : join(parent, `loopgate-etc-${uid}`);
  if (uid === 0 && !ownedAndClosed(parent, 0, 0o022)) return null;
  try {
    mkdirSync(base, { mode: uid === 0 ? 0o755 : 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") return null;
  }
  return ownedAndClosed(base, uid, uid === 0 ? 0o022 : 0o077) ? base : null;
}
