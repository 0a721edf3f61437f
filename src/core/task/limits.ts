import { z } from "zod";
import { InputError, LoopgateError } from "../kernel/errors.js";

const UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
};

/** Parses "256MiB", "1G", "4096" or a number of bytes (binary units: 1K = 1024); null when malformed. */
export function parseSize(value: string | number): number | null {
  if (typeof value === "number") return Number.isSafeInteger(value) && value > 0 ? value : null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(value);
  const factor = m ? UNITS[(m[2] ?? "").toLowerCase()] : undefined;
  if (!m || factor === undefined) return null;
  const n = Math.round(Number(m[1]) * factor);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

const SIZE_MESSAGE = 'expected a size such as "256MiB", "1GiB", "64K" or a number of bytes';
const size = z
  .union([z.string(), z.number()])
  .refine((v) => parseSize(v) !== null, { message: SIZE_MESSAGE });

/**
 * The defaults, and why. Observation: 50,000 paths and 1 GiB cover a real repository checkout
 * without its dependency folders (loopgate itself is ~400 paths, the Linux kernel ~80,000); a
 * single file past 256 MiB is a data dump, not a code change. Processes: RLIMIT_NPROC 1024 tasks
 * (threads count: a Node process has ~11) stops a fork bomb while vitest or pytest-xdist run;
 * RLIMIT_FSIZE 1 GiB per written file (a truncate past it fails too, so no sparse giant is made);
 * RLIMIT_DATA 4 GiB per process (heap, not address space: V8, Go and wasm reserve far more
 * address space than they use, so RLIMIT_AS would break them).
 */
export const DEFAULT_LIMITS = {
  files: 50_000,
  total_bytes: 1024 ** 3,
  file_bytes: 256 * 1024 ** 2,
  processes: 1024,
  file_size: 1024 ** 3,
  memory: 4 * 1024 ** 3,
} as const;

/** `limits:` of a task file: what the builder may leave in the workspace, and what each process may use. */
export const LimitsSchema = z
  .object({
    /** Paths (files, directories, links) the workspace may hold after the builder. */
    files: z.number().int().positive().optional(),
    /** Sum of the sizes of the workspace's regular files (a hard-linked file counts once). */
    total_bytes: size.optional(),
    /** The largest regular file the workspace may hold. */
    file_bytes: size.optional(),
    /** RLIMIT_NPROC of each builder and gate sandbox. */
    processes: z.number().int().positive().optional(),
    /** RLIMIT_FSIZE: the largest file a builder or gate process may write. */
    file_size: size.optional(),
    /** RLIMIT_DATA: the heap each builder or gate process may allocate. */
    memory: size.optional(),
  })
  .strict();

/** The task's limits with every default filled in, in bytes. */
export interface ResolvedLimits {
  files: number;
  totalBytes: number;
  fileBytes: number;
  processes: number;
  fileSize: number;
  memory: number;
}

/** What the observer enforces. */
export type ObservationLimits = Pick<ResolvedLimits, "files" | "totalBytes" | "fileBytes">;
/** What each sandboxed process gets as rlimits. */
export type ProcessLimits = Pick<ResolvedLimits, "processes" | "fileSize" | "memory">;

/**
 * Fills in the defaults of a task's `limits:`, sizes in bytes. Only the task resolver calls it (once, when
 * the task loads: core/task/resolve-task.ts). A size that is not one is refused naming its field (`file` is
 * the task file), never replaced by the default: a limit the user wrote is never silently another.
 */
export function resolveLimits(raw: z.infer<typeof LimitsSchema> | undefined, file?: string): ResolvedLimits {
  const sized = (name: "total_bytes" | "file_bytes" | "file_size" | "memory") => {
    const v = raw?.[name];
    if (v === undefined) return DEFAULT_LIMITS[name];
    const bytes = parseSize(v);
    if (bytes === null)
      throw new InputError(SIZE_MESSAGE, file === undefined ? `limits.${name}` : `${file}: limits.${name}`);
    return bytes;
  };
  return {
    files: raw?.files ?? DEFAULT_LIMITS.files,
    totalBytes: sized("total_bytes"),
    fileBytes: sized("file_bytes"),
    processes: raw?.processes ?? DEFAULT_LIMITS.processes,
    fileSize: sized("file_size"),
    memory: sized("memory"),
  };
}

/** The task-file name of each observation limit, as findings name it. */
export type ObservationLimitName = "files" | "total_bytes" | "file_bytes";

/** The workspace holds more than a limit allows; the observer stops at the first limit crossed. */
export class LimitExceededError extends LoopgateError {
  readonly limit: ObservationLimitName;
  readonly allowed: number;
  /** How much was seen when the observer stopped (at least `allowed + 1` for counts). */
  readonly seen: number;
  readonly path: string | undefined;
  constructor(limit: ObservationLimitName, allowed: number, seen: number, path?: string) {
    const what =
      limit === "files"
        ? `more than ${allowed} paths`
        : limit === "total_bytes"
          ? `more than ${allowed} bytes of files (${seen} seen when observation stopped)`
          : `a file of ${seen} bytes, over ${allowed}`;
    super(
      "limit_exceeded",
      `the workspace holds ${what}${path ? ` (at ${path})` : ""}: limits.${limit} is ${allowed}`,
    );
    this.limit = limit;
    this.allowed = allowed;
    this.seen = seen;
    this.path = path;
  }
}
