import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createEditFileTool } from "../src/agent/tools/edit-file.js";
import { sandboxFileOps } from "../src/agent/tools/file-ops.js";
import { createListFilesTool } from "../src/agent/tools/list-files.js";
import { createReadFileTool } from "../src/agent/tools/read-file.js";
import type { AgentTool, ToolContext } from "../src/agent/tools/tool.js";
import { defaultTools, executeToolCall } from "../src/agent/tools/tool-registry.js";
import { createWriteFileTool } from "../src/agent/tools/write-file.js";
import type { LoopgateEvent } from "../src/core/events/loopgate-event.js";
import type { SandboxMode } from "../src/sandbox/bubblewrap.js";
import { runProcess } from "../src/sandbox/process.js";
import { SqliteEventStore } from "../src/store/sqlite/sqlite-event-store.js";
import { type BenchResult, formatBenchTable } from "./bench-result.js";

const CALLS = 30;
/** In-process calls take microseconds: more of them, for a steady median. */
const FAST_CALLS = 300;
/** What a file tool call may cost in process, for a small file. */
const FILE_TOOL_TARGET_US = 1000;

/** The same file tools on the sandboxed-command operations: the baseline the in-process ones replace. */
const sandboxedFileTools: AgentTool[] = [
  createReadFileTool(sandboxFileOps),
  createWriteFileTool(sandboxFileOps),
  createEditFileTool(sandboxFileOps),
  createListFilesTool(sandboxFileOps),
];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

async function timeEach(fn: () => unknown, calls = CALLS): Promise<number> {
  await fn(); // warm-up, not counted
  const ts: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await fn();
    ts.push((performance.now() - t) * 1000);
  }
  return median(ts);
}

function result(metric: string, loopgate: number, baseline: number, note: string): BenchResult {
  return {
    metric,
    unit: "µs/call",
    loopgate,
    baseline,
    ratio: loopgate / baseline,
    target: "measured",
    met: true,
    note,
  };
}

function fileToolResult(metric: string, loopgate: number, baseline: number, note: string): BenchResult {
  // The ratio column rounds to 0.00 against a spawned baseline: the note says the factor.
  const factor =
    baseline > loopgate ? `; ${Math.round(baseline / loopgate).toLocaleString("en-US")}× less` : "";
  return {
    ...result(metric, loopgate, baseline, `${note}${factor}`),
    target: `≤ ${FILE_TOOL_TARGET_US.toLocaleString("en-US")} µs`,
    met: loopgate <= FILE_TOOL_TARGET_US,
  };
}

/**
 * Median per-call wall time of the agent tools against the bare operation: `bash true` in the
 * sandbox vs spawning /bin/true; the file tools in process (the default) vs the same tools on small
 * sandboxed commands, measured in the same run, and read_file vs fs.readFileSync.
 */
export async function benchTools(mode: SandboxMode = "bubblewrap"): Promise<BenchResult[]> {
  const ws = mkdtempSync(path.join(tmpdir(), "lg-tool-bench-"));
  try {
    writeFileSync(path.join(ws, "small.txt"), "hello\n".repeat(50));
    const ctx: ToolContext = { workspace: ws, sandbox: mode, network: false, timeoutMs: 30_000 };
    const call = async (name: string, args: unknown, tools: AgentTool[] = defaultTools) => {
      const r = await executeToolCall(tools, { id: "b", name, args }, ctx);
      if (r.isError) throw new Error(`${name} failed in the bench: ${r.content}`);
    };
    const bash = await timeEach(() => call("bash", { command: "true" }));
    const bare = await timeEach(() =>
      runProcess(["/bin/true"], { cwd: ws, env: { PATH: "/usr/bin:/bin" }, timeoutMs: 30_000 }),
    );
    // The full per-call cost inside the agent loop: intent appended, sandboxed call, result appended.
    const store = SqliteEventStore.open(path.join(ws, "events.db"));
    let rev = -1;
    let k = 0;
    const recorded = await timeEach(async () => {
      const id = `c${k++}`;
      const at = new Date().toISOString();
      const started: LoopgateEvent = {
        id: `${id}-s`,
        type: "tool_call_started",
        data: { attempt: 1, turn: 1, call_id: id, name: "bash", args: { command: "true" }, mutating: true },
        meta: { at, origin: "runtime" },
      };
      rev = (await store.append("run-bench", [started], rev < 0 ? "no_stream" : rev)).lastRevision;
      const r = await executeToolCall(defaultTools, { id, name: "bash", args: { command: "true" } }, ctx);
      const finished: LoopgateEvent = {
        id: `${id}-f`,
        type: "tool_call_finished",
        data: {
          attempt: 1,
          call_id: id,
          name: "bash",
          valid: r.valid,
          is_error: r.isError,
          exit_code: r.exitCode,
          subject: r.subject,
          content: r.content,
          duration_ms: r.durationMs,
        },
        meta: { at, origin: "runtime" },
      };
      rev = (await store.append("run-bench", [finished], rev)).lastRevision;
    });
    await store.close();
    // A folder of its own, so the listing holds exactly small.txt, w.txt and 20 more.
    mkdirSync(path.join(ws, "files"));
    writeFileSync(path.join(ws, "files/small.txt"), "hello\n".repeat(50));
    for (let i = 0; i < 20; i++) writeFileSync(path.join(ws, `files/e${i}.txt`), "x\n");
    const small = "hello\n".repeat(50);
    const sandboxed = sandboxedFileTools;
    const pairs = {
      read: ["read_file", { path: "files/small.txt" }],
      write: ["write_file", { path: "files/w.txt", content: small }],
      list: ["list_files", { path: "files" }],
    } as const;
    // edit_file refuses identical texts: alternate the replacement instead.
    let flip = false;
    const editArgs = () => {
      flip = !flip;
      return flip
        ? { path: "files/small.txt", old_text: "hello", new_text: "HELLO", replace_all: true }
        : { path: "files/small.txt", old_text: "HELLO", new_text: "hello", replace_all: true };
    };
    const inProcess = {
      read: await timeEach(() => call(...pairs.read), FAST_CALLS),
      write: await timeEach(() => call(...pairs.write), FAST_CALLS),
      edit: await timeEach(() => call("edit_file", editArgs()), FAST_CALLS),
      list: await timeEach(() => call(...pairs.list), FAST_CALLS),
    };
    const spawned = {
      read: await timeEach(() => call(...pairs.read, sandboxed)),
      write: await timeEach(() => call(...pairs.write, sandboxed)),
      edit: await timeEach(() => call("edit_file", editArgs(), sandboxed)),
      list: await timeEach(() => call(...pairs.list, sandboxed)),
    };
    const fsRead = await timeEach(() => readFileSync(path.join(ws, "files/small.txt"), "utf8"), FAST_CALLS);
    const vsSpawn = `baseline: the same tool on sandboxed commands (${mode}), this run`;
    return [
      result(`bash tool "true" (${mode})`, bash, bare, "baseline: /bin/true via runProcess"),
      result(`bash "true" + intent/result appends`, recorded, bare, "sandbox + 2 SQLite appends (FULL sync)"),
      fileToolResult("read_file 300 B (in process)", inProcess.read, spawned.read, vsSpawn),
      fileToolResult("read_file 300 B vs readFileSync", inProcess.read, fsRead, "baseline: fs.readFileSync"),
      fileToolResult("write_file 300 B (in process)", inProcess.write, spawned.write, vsSpawn),
      fileToolResult("edit_file 300 B, 50 matches (in process)", inProcess.edit, spawned.edit, vsSpawn),
      fileToolResult("list_files 22 entries (in process)", inProcess.list, spawned.list, vsSpawn),
    ];
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(formatBenchTable(await benchTools()));
}
