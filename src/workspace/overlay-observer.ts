import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readlinkSync, type Stats } from "node:fs";
import path from "node:path";
import { InfrastructureError } from "../core/kernel/errors.js";
import { childPath, encodePathBytes, pathByteLength, pathText } from "../core/kernel/path-bytes.js";
import {
  comparePaths,
  entryIdBytes,
  type Observation,
  type ObservationIdBytes,
  type ObservedEntry,
  observationId,
  observationIdBytes,
  observationIdOf,
} from "../core/observation/observation.js";
import { LimitExceededError } from "../core/task/limits.js";
import {
  type CacheEntry,
  MAX_PATH_BYTES,
  UNREADABLE,
  WorkspaceObserver,
  type WorkspaceObserverOptions,
} from "./observer.js";

/** The pristine observation indexed once for an overlay's observations: positions, children, totals. */
interface PristineIndex {
  entries: readonly ObservedEntry[];
  position: Map<string, number>;
  /** Each folder's direct children by name ("" is the root). */
  children: Map<string, string[]>;
  /** Paths the WorkspaceObserver would count against limits.files (all but those too long to address). */
  counted: number;
  bytes: number;
  /** What observationId hashes for the pristine entries, so a merge's id reuses it; null for a list it cannot split. */
  idBytes: ObservationIdBytes | null;
  /** The pristine files over limits.fileBytes (the limits do not change for an observer). */
  oversized: readonly ObservedEntry[];
}

/** What of the pristine a merge left out: its counts against the limits, and its files. */
interface Dropped {
  counted: number;
  bytes: number;
  paths: Set<string>;
}

/** One walk's findings over the upper layer. */
interface UpperWalk {
  /** Entries whose truth is in the upper layer: new, changed, or folders the builder wrote inside. */
  out: ObservedEntry[];
  /** Pristine paths no longer there, each with everything under it (deleted, or replaced by a non-folder). */
  removed: string[];
  next: Map<string, CacheEntry>;
  racyFrom: number;
}

/**
 * Observes an overlay workspace (overlay-mount.ts) in O(changes): the merged tree is the pristine
 * observation of the read-only lower layer with what the upper layer holds on top. Only folders
 * present in the upper layer are listed (through the mount, so whiteouts and opaque folders are the
 * kernel's own answer, never re-interpreted here); what they hold in the upper layer is read from it
 * with the WorkspaceObserver's rules (lstat only, stat cache, hard links read once, limits), and what
 * they do not is the pristine entry, unchanged. The observation is the one a WorkspaceObserver walking
 * the mount would produce, entry for entry and id for id.
 */
export class OverlayObserver extends WorkspaceObserver {
  private readonly upper: string;
  private readonly pristine: Observation;
  private index: PristineIndex | undefined;
  /** The entries the last observation took from the upper layer, sorted (the attempt's changes). */
  lastChanged: readonly ObservedEntry[] = [];

  /**
   * `merged` is the mounted workspace, `upper` its upper layer, `pristine` the observation of its
   * lower layer (which must not change while it is mounted).
   */
  constructor(merged: string, upper: string, pristine: Observation, options: WorkspaceObserverOptions = {}) {
    super(merged, options);
    this.upper = path.resolve(upper);
    this.pristine = pristine;
  }

  override async observe(): Promise<Observation> {
    for (const dir of [this.root, this.upper]) {
      if (!lstatSync(dir, { throwIfNoEntry: false })?.isDirectory())
        throw new InfrastructureError(`cannot observe ${dir}: not a directory`);
    }
    if (!this.cacheLoaded) this.loadCache();
    const index = this.indexPristine();
    const now = this.options.now ?? Date.now;
    const w: UpperWalk = {
      out: [],
      removed: [],
      next: new Map(),
      racyFrom: now() - (this.options.racyWindowMs ?? 2000),
    };
    this.pass = { paths: 0, bytes: 0, inodes: new Map() };
    this.walkUpper(this.root, this.upper, "", 0, w, index);
    const changed = w.out.sort((a, b) => comparePaths(a.path, b.path));
    const merged = mergeWithPristine(index, changed, w.removed);
    this.checkTotals(index, merged.dropped);
    this.cache = w.next;
    this.stats.observations++;
    if (this.options.cacheFile) this.saveCache(this.options.cacheFile);
    this.lastChanged = changed;
    return { id: merged.id ?? observationId(merged.entries), entries: merged.entries };
  }

  private indexPristine(): PristineIndex {
    if (this.index) return this.index;
    const entries = this.pristine.entries;
    const position = new Map<string, number>();
    const children = new Map<string, string[]>();
    let counted = 0;
    let bytes = 0;
    const oversized: ObservedEntry[] = [];
    const fileBytes = this.options.limits?.fileBytes ?? Number.POSITIVE_INFINITY;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i] as ObservedEntry;
      position.set(e.path, i);
      const cut = e.path.lastIndexOf("/");
      const parent = cut < 0 ? "" : e.path.slice(0, cut);
      const list = children.get(parent);
      if (list) list.push(e.path.slice(cut + 1));
      else children.set(parent, [e.path.slice(cut + 1)]);
      if (pathByteLength(e.path) <= MAX_PATH_BYTES) counted++;
      if (e.type === "file") {
        bytes += e.size;
        if (e.size > fileBytes) oversized.push(e);
      }
    }
    const idBytes = observationIdBytes(entries);
    this.index = { entries, position, children, counted, bytes, idBytes, oversized };
    return this.index;
  }

  /**
   * Walks folder `rel`, which is in the upper layer: its names come from the mount (what the builder
   * sees); a name the upper layer holds is observed there, one it does not is the lower's, unchanged.
   */
  private walkUpper(
    mergedAbs: string | Buffer,
    upperAbs: string | Buffer,
    rel: string,
    relBytes: number,
    w: UpperWalk,
    index: PristineIndex,
  ) {
    let names: Buffer[];
    try {
      names = readdirSync(mergedAbs, { encoding: "buffer" });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? "";
      if (code === "ENOENT" || code === "ENOTDIR") return;
      if (UNREADABLE.has(code)) {
        const last = w.out[w.out.length - 1];
        if (last && last.path === rel) w.out[w.out.length - 1] = { ...last, type: "other" };
        return;
      }
      throw new InfrastructureError(`cannot read directory ${pathText(mergedAbs)}`, { cause: e });
    }
    const inPristine = rel === "" || index.entries[index.position.get(rel) ?? -1]?.type === "dir";
    const seen = inPristine ? new Set<string>() : null;
    // The names this folder holds in the upper layer, by their bytes: only those are looked at there (one
    // listing instead of an lstat per name the mount shows). Null when the listing fails: lstat each name.
    const inUpper = upperNames(upperAbs);
    const upperBase = (typeof upperAbs === "string" ? Buffer.byteLength(upperAbs) : upperAbs.length) + 1;
    for (const raw of names) {
      const name = encodePathBytes(raw);
      seen?.add(name);
      // Not in the upper layer: the lower's entry (and all under it) shows through, as observed. A path
      // too long for lstat still goes to lstat, which says so, as every other name did.
      if (inUpper && !inUpper.has(raw.toString("latin1")) && upperBase + raw.length < PATH_MAX) continue;
      const childRel = rel === "" ? name : `${rel}/${name}`;
      const childUpper = childPath(upperAbs, raw, name);
      const childBytes = relBytes + (rel === "" ? 0 : 1) + raw.length;
      let st: Stats | undefined;
      try {
        st = lstatSync(childUpper, { throwIfNoEntry: false });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENAMETOOLONG") throw e;
        st = undefined;
        w.out.push({ path: childRel, type: "other", mode: 0, size: 0, hash: "" });
        continue;
      }
      // Not in the upper layer: the lower's entry (and all under it) shows through, as observed.
      if (!st) continue;
      const before = index.entries[index.position.get(childRel) ?? -1];
      if (before?.type === "dir" && !st.isDirectory()) w.removed.push(childRel);
      if (childBytes > MAX_PATH_BYTES) {
        w.out.push({ path: childRel, type: "other", mode: 0, size: 0, hash: "" });
        continue;
      }
      this.count(childRel, st);
      const mode = st.mode & 0o7777;
      if (st.isFile()) this.observeFile(childUpper, childRel, st, mode, w.out, w.next, w.racyFrom);
      else if (st.isDirectory()) {
        w.out.push({ path: childRel, type: "dir", mode, size: 0, hash: "" });
        this.walkUpper(childPath(mergedAbs, raw, name), childUpper, childRel, childBytes, w, index);
      } else if (st.isSymbolicLink()) {
        const target = readlinkSync(childUpper, { encoding: "buffer" });
        w.out.push({
          path: childRel,
          type: "symlink",
          mode,
          size: Number(st.size),
          hash: createHash("sha256").update(target).digest("hex"),
          target: encodePathBytes(target),
        });
      } else w.out.push({ path: childRel, type: "other", mode, size: 0, hash: "" });
    }
    // What the lower layer held here and the mount no longer shows: deleted (a whiteout) or hidden (an opaque folder).
    if (seen) {
      for (const name of index.children.get(rel) ?? [])
        if (!seen.has(name)) w.removed.push(rel === "" ? name : `${rel}/${name}`);
    }
  }

  /**
   * The limits over the whole merged tree: the walk already stopped at any the upper layer alone
   * crossed (the merged tree holds at least that much); these are the pristine's totals less what was
   * dropped, plus the upper layer's.
   */
  private checkTotals(index: PristineIndex, dropped: Dropped) {
    const limits = this.options.limits;
    if (!limits) return;
    // A pristine file over the size limit still shows through, unless the builder replaced it.
    for (const e of index.oversized)
      if (!dropped.paths.has(e.path))
        throw new LimitExceededError("file_bytes", limits.fileBytes, e.size, e.path);
    const paths = index.counted - dropped.counted + this.pass.paths;
    if (paths > limits.files) throw new LimitExceededError("files", limits.files, limits.files + 1);
    const bytes = index.bytes - dropped.bytes + this.pass.bytes;
    if (bytes > limits.totalBytes) throw new LimitExceededError("total_bytes", limits.totalBytes, bytes);
  }
}

/** PATH_MAX: lstat refuses a longer path (ENAMETOOLONG) whether or not it exists. */
const PATH_MAX = 4096;

/** The names of an upper-layer folder as latin1 keys of their bytes; empty when it is gone, null when unreadable. */
function upperNames(upperAbs: string | Buffer): Set<string> | null {
  try {
    return new Set(readdirSync(upperAbs, { encoding: "buffer" }).map((b) => b.toString("latin1")));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "";
    return code === "ENOENT" || code === "ENOTDIR" ? new Set() : null;
  }
}

/** The first index in `entries` whose path sorts at or after `p`. */
function lowerBound(entries: readonly ObservedEntry[], p: string): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (comparePaths((entries[mid] as ObservedEntry).path, p) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The pristine entries with the changed ones in their place and the removed subtrees left out, in
 * path order; also what was dropped of the pristine, for the limits, and the merged list's id (from
 * the pristine's bytes and the changed entries', the same as observationId's), or null when the
 * bytes cannot be split by entry.
 */
function mergeWithPristine(
  index: PristineIndex,
  changed: readonly ObservedEntry[],
  removed: readonly string[],
): { entries: ObservedEntry[]; dropped: Dropped; id: string | null } {
  const { entries } = index;
  const drop = new Uint8Array(entries.length);
  const dropped: Dropped = { counted: 0, bytes: 0, paths: new Set() };
  const mark = (i: number) => {
    if (drop[i]) return;
    drop[i] = 1;
    const e = entries[i] as ObservedEntry;
    if (pathByteLength(e.path) <= MAX_PATH_BYTES) dropped.counted++;
    if (e.type === "file") {
      dropped.bytes += e.size;
      dropped.paths.add(e.path);
    }
  };
  for (const r of removed) {
    const at = index.position.get(r);
    if (at !== undefined) mark(at);
    // Everything under r is one contiguous run of the sorted entries: those that start with `r/`.
    const prefix = `${r}/`;
    for (let i = lowerBound(entries, prefix); i < entries.length; i++) {
      if (!(entries[i] as ObservedEntry).path.startsWith(prefix)) break;
      mark(i);
    }
  }
  for (const c of changed) {
    const at = index.position.get(c.path);
    if (at !== undefined) mark(at);
  }
  const out: ObservedEntry[] = [];
  // The id's bytes: runs of kept pristine entries as slices of the pristine's bytes, changed entries between.
  const pristineBytes = index.idBytes;
  let parts: Uint8Array[] | null = pristineBytes ? [] : null;
  let runFrom = 0;
  const endRun = (i: number) => {
    if (parts && pristineBytes && i > runFrom) {
      const { bytes, offsets } = pristineBytes;
      parts.push(bytes.subarray(offsets[runFrom], offsets[i]));
    }
  };
  const insert = (c: ObservedEntry) => {
    out.push(c);
    if (!parts) return;
    const b = entryIdBytes(c);
    if (b) parts.push(b);
    else parts = null;
  };
  // Each changed entry goes before the first pristine entry that sorts at or after it (one binary search
  // per change, not a comparison per pristine entry); a pristine entry of the same path was dropped above.
  const at = changed.map((c) => lowerBound(entries, c.path));
  let j = 0;
  for (let i = 0; i < entries.length; i++) {
    if (j < changed.length && (at[j] as number) <= i) {
      endRun(i);
      runFrom = i;
      while (j < changed.length && (at[j] as number) <= i) insert(changed[j++] as ObservedEntry);
    }
    if (drop[i]) {
      endRun(i);
      runFrom = i + 1;
      continue;
    }
    out.push(entries[i] as ObservedEntry);
  }
  endRun(entries.length);
  while (j < changed.length) insert(changed[j++] as ObservedEntry);
  return { entries: out, dropped, id: parts ? observationIdOf(parts) : null };
}
