import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  renameSync,
  type Stats,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { z } from "zod";
import { InfrastructureError, InputError } from "../core/kernel/errors.js";
import { childPath, encodePathBytes, pathText } from "../core/kernel/path-bytes.js";
import { createObservation, type Observation, type ObservedEntry } from "../core/observation/observation.js";
import { LimitExceededError, type ObservationLimits } from "../core/task/limits.js";

/**
 * What one stat-cache entry remembers about a file: if all of it still matches, the content does
 * too. Times are float milliseconds (sub-microsecond resolution today): number stats cost less
 * than bigint ones, and a same-size rewrite within that resolution is caught by the racy rule.
 */
export interface CacheEntry {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  /** The entry this stat produced, reused as is while the stat matches (entries are frozen). */
  entry: ObservedEntry;
}

/** Options of a WorkspaceObserver; `now` and `racyWindowMs` exist for tests and unusual filesystems. */
export interface WorkspaceObserverOptions {
  /** Persist the stat cache here (JSON), outside the observed tree. */
  cacheFile?: string;
  /** Files changed less than this long before an observation started are re-hashed next time (default 2000). */
  racyWindowMs?: number;
  /** Wall clock in milliseconds (default Date.now). */
  now?: () => number;
  /**
   * Stop with a LimitExceededError at the first limit crossed, before reading more: a file over
   * `fileBytes` is never read, and no more than `files + 1` paths are held in memory.
   */
  limits?: ObservationLimits;
}

/** What one observation has counted so far, and the hard-linked inodes it has already hashed. */
export interface Pass {
  paths: number;
  bytes: number;
  /** `dev:ino` of files with more than one link → the hash their first path got, while the stat matches. */
  inodes: Map<string, { size: number; mtimeMs: number; ctimeMs: number; hash: string; bytes: number }>;
}

/** Counters that let callers and tests see how much work an observation did. */
export interface ObserverStats {
  observations: number;
  filesHashed: number;
  bytesHashed: number;
  cacheHits: number;
  /** Files whose hash was taken from another link to the same inode in the same observation. */
  linkHits: number;
}

const CacheFile = z.object({
  version: z.literal(1),
  root: z.string(),
  entries: z.array(
    z.tuple([
      z.string(),
      z.number(),
      z.number(),
      z.number(),
      z.number(),
      z.number().int(),
      z.string().regex(/^[0-9a-f]{64}$/),
    ]),
  ),
});

// O_NOFOLLOW: a file swapped for a symlink after lstat is not followed; O_NONBLOCK: a FIFO swapped in cannot hang us.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
export const UNREADABLE = new Set(["EACCES", "EPERM", "ELOOP", "ENXIO", "EAGAIN", "ENAMETOOLONG"]);

/**
 * The longest workspace-relative path (in bytes) that is observed as what it is: PATH_MAX (4096)
 * less room for the folders loopgate puts it under (a gate environment, a store); longer is "other".
 */
export const MAX_PATH_BYTES = 3072;

/**
 * Observes a tree by walking it itself: lstat only, symlinks never followed, nothing inside the
 * tree (.gitignore, git config) consulted, `.git/` and dotfiles included. A stat cache makes
 * repeat observations cheap; entries cached while racily new are re-hashed, as git does.
 */
export class WorkspaceObserver {
  /** Work counters, cumulative over this observer's life. */
  readonly stats: ObserverStats = {
    observations: 0,
    filesHashed: 0,
    bytesHashed: 0,
    cacheHits: 0,
    linkHits: 0,
  };
  protected readonly root: string;
  protected readonly options: WorkspaceObserverOptions;
  protected cache = new Map<string, CacheEntry>();
  protected cacheLoaded = false;
  private readonly buf = Buffer.allocUnsafe(1 << 20);
  protected pass: Pass = { paths: 0, bytes: 0, inodes: new Map() };

  constructor(root: string, options: WorkspaceObserverOptions = {}) {
    this.root = path.resolve(root);
    this.options = options;
    const cacheFile = options.cacheFile ? path.resolve(options.cacheFile) : undefined;
    // A cache inside the tree could be forged by the agent to hide its changes.
    if (cacheFile && !path.relative(this.root, cacheFile).startsWith("..")) {
      throw new InputError(
        `stat cache ${cacheFile} must live outside the observed tree ${this.root}`,
        "cacheFile",
      );
    }
  }

  /** Walks the tree and returns its observation; re-hashes only files whose stat changed or was racy. */
  async observe(): Promise<Observation> {
    const rootStat = lstatSync(this.root, { throwIfNoEntry: false });
    if (!rootStat?.isDirectory())
      throw new InfrastructureError(`cannot observe ${this.root}: not a directory`);
    if (!this.cacheLoaded) this.loadCache();
    const now = this.options.now ?? Date.now;
    const racyFrom = now() - (this.options.racyWindowMs ?? 2000);
    const next = new Map<string, CacheEntry>();
    const entries: ObservedEntry[] = [];
    this.pass = { paths: 0, bytes: 0, inodes: new Map() };
    this.walk(this.root, "", 0, entries, next, racyFrom);
    this.cache = next;
    this.stats.observations++;
    if (this.options.cacheFile) this.saveCache(this.options.cacheFile);
    return createObservation(entries);
  }

  private walk(
    abs: string | Buffer,
    rel: string,
    relBytes: number,
    out: ObservedEntry[],
    next: Map<string, CacheEntry>,
    racyFrom: number,
  ) {
    let names: Buffer[];
    try {
      // Raw bytes: a name that is not UTF-8 is observed (and carried) like any other, under its encoded path.
      names = readdirSync(abs, { encoding: "buffer" });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? "";
      if (code === "ENOENT" || code === "ENOTDIR") return; // vanished while we walked
      if (UNREADABLE.has(code)) return this.markOther(out, rel);
      throw new InfrastructureError(`cannot read directory ${pathText(abs)}`, { cause: e });
    }
    for (const raw of names) {
      const name = encodePathBytes(raw);
      const childRel = rel === "" ? name : `${rel}/${name}`;
      const childAbs = childPath(abs, raw, name);
      const childBytes = relBytes + (rel === "" ? 0 : 1) + raw.length;
      // A path longer than loopgate can address from its own folders (the gate environment, the blob
      // store) is recorded and never carried or entered: the builder's problem, never a TOOL_FAILURE.
      if (childBytes > MAX_PATH_BYTES) {
        out.push({ path: childRel, type: "other", mode: 0, size: 0, hash: "" });
        continue;
      }
      let st: Stats | undefined;
      try {
        st = lstatSync(childAbs, { throwIfNoEntry: false });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENAMETOOLONG") throw e;
        out.push({ path: childRel, type: "other", mode: 0, size: 0, hash: "" });
        continue;
      }
      if (!st) continue;
      this.count(childRel, st);
      const mode = st.mode & 0o7777;
      if (st.isFile()) this.observeFile(childAbs, childRel, st, mode, out, next, racyFrom);
      else if (st.isDirectory()) {
        out.push({ path: childRel, type: "dir", mode, size: 0, hash: "" });
        this.walk(childAbs, childRel, childBytes, out, next, racyFrom);
      } else if (st.isSymbolicLink()) {
        const target = readlinkSync(childAbs, { encoding: "buffer" });
        const hash = createHash("sha256").update(target).digest("hex");
        out.push({
          path: childRel,
          type: "symlink",
          mode,
          size: Number(st.size),
          hash,
          target: encodePathBytes(target),
        });
      } else out.push({ path: childRel, type: "other", mode, size: 0, hash: "" });
    }
  }

  /** Counts one path against the limits; throws at the first one crossed. */
  protected count(rel: string, st: Stats | undefined) {
    const limits = this.options.limits;
    if (!limits) return;
    const pass = this.pass;
    if (++pass.paths > limits.files) throw new LimitExceededError("files", limits.files, pass.paths);
    if (!st?.isFile()) return;
    if (st.size > limits.fileBytes)
      throw new LimitExceededError("file_bytes", limits.fileBytes, st.size, rel);
    // A hard-linked inode costs loopgate one read and one blob, so its bytes count once.
    if (st.nlink > 1 && pass.inodes.has(`${st.dev}:${st.ino}`)) return;
    pass.bytes += st.size;
    if (pass.bytes > limits.totalBytes)
      throw new LimitExceededError("total_bytes", limits.totalBytes, pass.bytes, rel);
  }

  /**
   * The hash of a hard-linked file another path of this observation already read, if its stat still
   * matches; else the file is read and, when it has other links, remembered for them.
   */
  private hashLinked(abs: string | Buffer, st: Stats): { hash: string; bytes: number } | undefined {
    if (st.nlink < 2) return this.hashFile(abs, st.size);
    const key = `${st.dev}:${st.ino}`;
    const seen = this.pass.inodes.get(key);
    if (seen && seen.size === st.size && seen.mtimeMs === st.mtimeMs && seen.ctimeMs === st.ctimeMs) {
      this.stats.linkHits++;
      return { hash: seen.hash, bytes: seen.bytes };
    }
    const hashed = this.hashFile(abs, st.size);
    if (hashed && hashed.bytes === st.size)
      this.pass.inodes.set(key, { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ...hashed });
    return hashed;
  }

  protected observeFile(
    abs: string | Buffer,
    rel: string,
    st: Stats,
    mode: number,
    out: ObservedEntry[],
    next: Map<string, CacheEntry>,
    racyFrom: number,
  ) {
    const cached = this.cache.get(rel);
    if (
      cached !== undefined &&
      cached.ino === st.ino &&
      cached.size === st.size &&
      cached.mtimeMs === st.mtimeMs &&
      cached.ctimeMs === st.ctimeMs &&
      cached.entry.mode === mode
    ) {
      this.stats.cacheHits++;
      if (st.nlink > 1) {
        const { hash, size } = cached.entry;
        const seen = { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, hash, bytes: size };
        this.pass.inodes.set(`${st.dev}:${st.ino}`, seen);
      }
      next.set(rel, cached);
      out.push(cached.entry);
      return;
    }
    const hashed = this.hashLinked(abs, st);
    if (hashed === undefined) {
      out.push({ path: rel, type: "other", mode, size: 0, hash: "" });
      return;
    }
    const entry = Object.freeze({
      path: rel,
      type: "file" as const,
      mode,
      size: hashed.bytes,
      hash: hashed.hash,
    });
    out.push(entry);
    // Not cached: a file that changed while we read it, or one racily new (a later write in the
    // same timestamp tick would leave its stat unchanged), is hashed again next time.
    if (hashed.bytes === st.size && st.mtimeMs < racyFrom && st.ctimeMs < racyFrom) {
      next.set(rel, { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, entry });
    }
  }

  /** Hashes a file through one reused buffer; undefined if it cannot be opened as a regular file any more. */
  private hashFile(abs: string | Buffer, expected: number): { hash: string; bytes: number } | undefined {
    let fd: number;
    try {
      fd = openSync(abs, OPEN_FLAGS);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? "";
      if (code === "ENOENT" || UNREADABLE.has(code)) return undefined;
      throw new InfrastructureError(`cannot read ${pathText(abs)}`, { cause: e });
    }
    try {
      const h = createHash("sha256");
      let bytes = 0;
      // Read up to the stat size, then once more only to notice growth; small files cost one read.
      for (;;) {
        const want = bytes < expected ? Math.min(this.buf.length, expected - bytes) : this.buf.length;
        const n = readSync(fd, this.buf, 0, want, null);
        if (n === 0) break;
        h.update(this.buf.subarray(0, n));
        bytes += n;
        if (bytes === expected && want < this.buf.length) break;
      }
      this.stats.filesHashed++;
      this.stats.bytesHashed += bytes;
      return { hash: h.digest("hex"), bytes };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? "";
      if (UNREADABLE.has(code) || code === "EISDIR") return undefined;
      throw new InfrastructureError(`cannot read ${pathText(abs)}`, { cause: e });
    } finally {
      closeSync(fd);
    }
  }

  private markOther(out: ObservedEntry[], rel: string) {
    const last = out[out.length - 1];
    if (last && last.path === rel) out[out.length - 1] = { ...last, type: "other" };
  }

  protected loadCache() {
    this.cacheLoaded = true;
    const file = this.options.cacheFile;
    if (!file) return;
    try {
      const parsed = CacheFile.parse(JSON.parse(readFileSync(file, "utf8")));
      if (parsed.root !== this.root) return;
      for (const [p, ino, size, mtimeMs, ctimeMs, mode, hash] of parsed.entries) {
        const entry = Object.freeze({ path: p, type: "file" as const, mode, size, hash });
        this.cache.set(p, { ino, size, mtimeMs, ctimeMs, entry });
      }
    } catch {
      // A missing or damaged cache only costs a full re-hash; it can never make an observation wrong.
      this.cache.clear();
    }
  }

  protected saveCache(file: string) {
    const entries = [...this.cache].map(([p, c]) => [
      p,
      c.ino,
      c.size,
      c.mtimeMs,
      c.ctimeMs,
      c.entry.mode,
      c.entry.hash,
    ]);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ version: 1, root: this.root, entries }));
    renameSync(tmp, file);
  }
}
