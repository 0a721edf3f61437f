import { z } from "zod";
import { isEncodedPath } from "../kernel/path-bytes.js";

/**
 * A task as `loopgate submit` snapshots it into a shared store, so a worker on any machine can run it
 * without the submitter's folder: the task folder (less its `.loopgate/` store) and every path the task
 * file names outside it (workspace, held-out and canary folders, oracle, generator files). Paths are
 * relative to `base`, the deepest folder holding all of them, so the task file's relative references
 * resolve the same way once the snapshot is written out elsewhere. File contents are blobs (sha256 keys)
 * in the content store; the manifest itself is stored as a blob too, and its hash names the snapshot.
 * A name that is not UTF-8 is kept under its encoded path (path-bytes.ts).
 */
export const TASK_SNAPSHOT_VERSION = 1;

const hash = z.string().regex(/^[0-9a-f]{64}$/, "a sha256 hex digest");

/** A relative path of normal components: no `..`, no `.`, no empty part, not absolute, no NUL. */
export const SnapshotPath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => isPlainRelative(p), { message: "a relative path without '..', '.' or empty parts" })
  .refine(isEncodedPath, { message: "an encoded path (no stray surrogate)" });

const mode = z.number().int().min(0).max(0o777);
const mtime = z.number().finite();

export const SnapshotEntry = z.discriminatedUnion("type", [
  z.object({ type: z.literal("dir"), path: SnapshotPath, mode, mtime }).strict(),
  z
    .object({
      type: z.literal("file"),
      path: SnapshotPath,
      mode,
      mtime,
      size: z.number().int().min(0),
      hash,
    })
    .strict(),
  z
    .object({
      type: z.literal("symlink"),
      path: SnapshotPath,
      target: z.string().min(1).max(4096).refine(isEncodedPath),
    })
    .strict(),
]);
export type SnapshotEntry = z.infer<typeof SnapshotEntry>;

export const TaskSnapshotManifest = z
  .object({
    version: z.literal(TASK_SNAPSHOT_VERSION),
    /** The task file, relative to the snapshot's root. */
    task_file: SnapshotPath,
    /** sha256 of the task file's text (LoadedTask.digest): the worker checks it after writing the snapshot out. */
    task_digest: hash,
    /** Every entry, parents before children. */
    entries: z.array(SnapshotEntry),
  })
  .strict();
export type TaskSnapshotManifest = z.infer<typeof TaskSnapshotManifest>;

/**
 * How much a submitted task may hold. A task folder is a repository checkout without its dependency
 * folders plus a few held-out files; 100 MiB and 50,000 paths cover that, and keep one submission from
 * filling the shared database (each file is one row, sent whole).
 */
export const TASK_SNAPSHOT_LIMITS = { bytes: 100 * 1024 ** 2, paths: 50_000 } as const;

/** True for a path of normal components (what every manifest path must be). */
export function isPlainRelative(p: string): boolean {
  if (p.includes("\0") || p.startsWith("/")) return false;
  return p.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

/** Why a snapshot of `bytes` in `paths` paths is refused, or null when it fits the limits. */
export function snapshotOverLimit(
  totals: { bytes: number; paths: number },
  limits: { bytes: number; paths: number } = TASK_SNAPSHOT_LIMITS,
): string | null {
  if (totals.bytes > limits.bytes)
    return `the task's files hold ${mib(totals.bytes)} (${totals.bytes} bytes), over the ${mib(limits.bytes)} a submitted task may hold`;
  if (totals.paths > limits.paths)
    return `the task holds ${totals.paths} paths, over the ${limits.paths} a submitted task may hold`;
  return null;
}

const mib = (n: number) => `${(n / 1024 ** 2).toFixed(1)} MiB`;
