import { LoopgateError } from "../../core/kernel/errors.js";
import { runSandboxed } from "../../sandbox/bubblewrap.js";
import { resolveProgram, scrubbedEnv } from "../../sandbox/environment.js";
import type { ProcessResult } from "../../sandbox/process.js";
import type { ToolContext } from "./tool.js";

/** A file operation that ran and failed (permission, a file where a directory was needed, ...). */
export class FileOpError extends LoopgateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("file_op_failed", message, options);
  }
}

/** What `read` found at a path; for a regular file, a slice of its bytes and facts about the whole. */
export type ReadOutcome =
  | { kind: "file"; size: number; totalLines: number; bytes: Buffer }
  | { kind: "missing" }
  | { kind: "directory" }
  | { kind: "other" }
  | { kind: "unreadable" };

/** One entry under a listed directory; `pruned` directories (.git, node_modules) were not descended. */
export interface ListEntry {
  path: string;
  type: "file" | "dir" | "symlink" | "other";
  target: string;
  pruned: boolean;
}

export type ListOutcome =
  | { kind: "directory"; entries: ListEntry[]; complete: boolean }
  | { kind: "missing" }
  | { kind: "file" };

/**
 * The filesystem primitives the file tools use, on absolute paths already checked by resolveToolPath.
 * Injected, so the same tools run on another implementation: confinedFileOps (confined-file-ops.ts, the
 * default, in process), sandboxFileOps (below: small commands in the agent sandbox), a fake in tests.
 */
export interface FileOps {
  /** At most `maxBytes` of a file, from the start of line `offsetLine` (1-based), and its size and line count. */
  read(abs: string, range: { offsetLine: number; maxBytes: number }): Promise<ReadOutcome>;
  /** Creates the parent directories and writes `data`, replacing the file's content. */
  write(abs: string, data: Buffer): Promise<void>;
  /** Entries under `abs`, never following symlinks, at most `maxEntries` (then `complete` is false). */
  list(abs: string, depth: number, maxEntries: number): Promise<ListOutcome>;
}

// Scripts take their operands as positional parameters: a path is never spliced into shell text.
// Few processes: each costs a fork and exec inside the sandbox. "=" ends the header; base64 keeps
// the bytes exact (binary detection, lossless edits) and apart from any error text.
const READ_SCRIPT = `f=$1
if [ ! -e "$f" ]; then echo missing; exit 0; fi
if [ -d "$f" ]; then echo directory; exit 0; fi
if [ ! -f "$f" ]; then echo other; exit 0; fi
if [ ! -r "$f" ]; then echo unreadable; exit 0; fi
echo file
wc -lc < "$f"
tail -c 1 -- "$f" | od -An -tx1
echo =
if [ "$2" = 1 ]; then head -c "$3" -- "$f"; else tail -n "+$2" -- "$f" | head -c "$3"; fi | base64 -w0`;

// The common case in one short pipeline: a file up to FAST_READ_LIMIT bytes comes back whole and is
// measured and sliced here; only a larger one takes READ_SCRIPT's several processes.
const FAST_READ_LIMIT = 2_000_000;
const FAST_READ_SCRIPT = `f=$1
if [ ! -e "$f" ]; then echo missing; exit 0; fi
if [ -d "$f" ]; then echo directory; exit 0; fi
if [ ! -f "$f" ]; then echo other; exit 0; fi
if [ ! -r "$f" ]; then echo unreadable; exit 0; fi
echo file
head -c "$2" -- "$f" | base64 -w0`;

/** Size, line count (a last line without a newline counts) and the slice from line `offsetLine`, of whole bytes. */
export function sliceLines(
  all: Buffer,
  offsetLine: number,
  maxBytes: number,
): { size: number; totalLines: number; bytes: Buffer } {
  let newlines = 0;
  let start = offsetLine <= 1 ? 0 : -1;
  for (let i = 0; i < all.length; i++) {
    if (all[i] !== 0x0a) continue;
    newlines++;
    if (start < 0 && newlines === offsetLine - 1) start = i + 1;
  }
  const size = all.length;
  const totalLines = newlines + (size > 0 && all[size - 1] !== 0x0a ? 1 : 0);
  const from = start < 0 ? size : start;
  return { size, totalLines, bytes: all.subarray(from, Math.min(size, from + maxBytes)) };
}

const WRITE_SCRIPT = `f=$1
case "$f" in "$2"/*) ;; *) echo "$f is outside the workspace $2" >&2; exit 4;; esac
if [ -d "$f" ]; then echo "is a directory" >&2; exit 3; fi
mkdir -p -- "$(dirname -- "$f")" && cat > "$f"`;

const LIST_SCRIPT = `d=$1
if [ ! -e "$d" ]; then echo missing; exit 0; fi
if [ ! -d "$d" ]; then echo file; exit 0; fi
echo directory
find -P "$d" -mindepth 1 -maxdepth "$2" \\( -name .git -o -name node_modules \\) -type d -prune -printf 'P\\0%P\\0\\0' \\
  -o -printf '%y\\0%P\\0%l\\0' 2>/dev/null | head -z -n "$3" | head -c "$4"`;

const LIST_MAX_BYTES = 4_000_000;
const FILE_OP_TIMEOUT_MS = 60_000;

/**
 * FileOps as small commands in the agent sandbox (or unsandboxed when ctx.sandbox is "none"): a process
 * per call, so tens of milliseconds each. The tools use confinedFileOps; this one remains for a caller
 * that wants the sandbox's mounts as a second wall, and as the baseline bench/tool-bench.ts measures.
 */
export function sandboxFileOps(ctx: ToolContext, workspace: string): FileOps {
  const sh = resolveProgram("sh", "/") ?? "/bin/sh";
  const run = (script: string, args: string[], writable: boolean, maxOutputBytes: number, input?: Buffer) =>
    runSandboxed(
      {
        argv: [sh, "-c", script, "sh", ...args],
        cwd: workspace,
        writable: writable ? [workspace] : [],
        readonly: writable ? [] : [workspace],
        env: scrubbedEnv({ home: "/tmp" }),
        network: false,
        timeoutMs: Math.min(ctx.timeoutMs, FILE_OP_TIMEOUT_MS),
        maxOutputBytes,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        ...(input ? { input } : {}),
      },
      ctx.sandbox,
    );
  return {
    async read(abs, { offsetLine, maxBytes }) {
      const fast = await run(
        FAST_READ_SCRIPT,
        [abs, String(FAST_READ_LIMIT + 1)],
        false,
        FAST_READ_LIMIT * 1.4 + 1000,
      );
      check(fast, "read");
      const first = fast.output.slice(0, fast.output.indexOf("\n"));
      if (first === "missing" || first === "directory" || first === "other" || first === "unreadable")
        return { kind: first };
      const encoded = fast.output.slice(first.length + 1);
      if (first === "file" && fast.exitCode === 0 && /^[A-Za-z0-9+/=]*$/.test(encoded)) {
        const all = Buffer.from(encoded, "base64");
        if (all.length <= FAST_READ_LIMIT) return { kind: "file", ...sliceLines(all, offsetLine, maxBytes) };
      }
      const r = await run(
        READ_SCRIPT,
        [abs, String(offsetLine), String(maxBytes)],
        false,
        maxBytes * 1.4 + 1000,
      );
      check(r, "read");
      const word = r.output.slice(0, r.output.indexOf("\n"));
      if (word === "missing" || word === "directory" || word === "other" || word === "unreadable")
        return { kind: word };
      const end = r.output.indexOf("\n=\n");
      const m = /^file\n\s*(\d+)\s+(\d+)\s*\n\s*([0-9a-f]*)\s*$/.exec(r.output.slice(0, end));
      const body = r.output.slice(end + 3);
      if (end < 0 || !m || !/^[A-Za-z0-9+/=]*$/.test(body))
        throw new FileOpError(`read failed: ${r.output.slice(0, 500)}`);
      const size = Number(m[2]);
      const totalLines = Number(m[1]) + (size > 0 && m[3] !== "0a" ? 1 : 0);
      return { kind: "file", size, totalLines, bytes: Buffer.from(body, "base64") };
    },
    async write(abs, data) {
      const r = await run(WRITE_SCRIPT, [abs, workspace], true, 4000, data);
      check(r, "write");
      if (r.exitCode !== 0) throw new FileOpError(`write failed: ${r.output.trim().slice(0, 500)}`);
    },
    async list(abs, depth, maxEntries) {
      const r = await run(
        LIST_SCRIPT,
        [abs, String(depth), String(3 * (maxEntries + 1)), String(LIST_MAX_BYTES)],
        false,
        LIST_MAX_BYTES + 1000,
      );
      check(r, "list");
      const nl = r.output.indexOf("\n");
      const head = nl < 0 ? r.output.trim() : r.output.slice(0, nl);
      if (head === "missing" || head === "file") return { kind: head };
      if (head !== "directory") throw new FileOpError(`list failed: ${r.output.slice(0, 500)}`);
      const fields = r.output.slice(nl + 1).split("\0");
      const entries: ListEntry[] = [];
      // The last field is what followed the final NUL: empty, or a record cut short by the byte cap.
      for (let i = 0; i + 3 < fields.length; i += 3) {
        const [y = "", p = "", target = ""] = fields.slice(i, i + 3);
        const type = y === "P" || y === "d" ? "dir" : y === "f" ? "file" : y === "l" ? "symlink" : "other";
        entries.push({ path: p, type, target, pruned: y === "P" });
      }
      const complete = entries.length <= maxEntries && fields.length - 1 === entries.length * 3;
      return { kind: "directory", entries: entries.slice(0, maxEntries), complete };
    },
  };
}

function check(r: ProcessResult, what: string): void {
  if (r.spawnError) throw new FileOpError(`${what} could not start: ${r.spawnError}`);
  if (r.timedOut) throw new FileOpError(`${what} timed out`);
  if (r.exitCode === null) throw new FileOpError(`${what} was killed (${r.signal})`);
}
