import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { defaultTools, executeToolCall } from "../src/agent/tools/registry.js";
import type { ToolContext } from "../src/agent/tools/tool.js";
import type { LoopgateEvent } from "../src/core/events.js";
import type { SandboxMode } from "../src/sandbox/bubblewrap.js";
import { runProcess } from "../src/sandbox/process.js";
import { SqliteEventStore } from "../src/store/sqlite-event-store.js";
import { type BenchResult, formatBenchTable } from "./bench-result.js";

const CALLS = 30;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

async function timeEach(fn: () => unknown): Promise<number> {
  await fn(); // warm-up, not counted
  const ts: number[] = [];
  for (let i = 0; i < CALLS; i++) {
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

/**
 * Median per-call wall time of the agent tools against the bare operation: `bash true` in the
 * sandbox vs spawning /bin/true, and read_file of a small file vs fs.readFileSync. No target.
 */
export async function benchTools(mode: SandboxMode = "bubblewrap"): Promise<BenchResult[]> {
  const ws = mkdtempSync(path.join(tmpdir(), "lg-tool-bench-"));
  try {
    writeFileSync(path.join(ws, "small.txt"), "hello\n".repeat(50));
    const ctx: ToolContext = { workspace: ws, sandbox: mode, network: false, timeoutMs: 30_000 };
    const call = async (name: string, args: unknown) => {
      const r = await executeToolCall(defaultTools, { id: "b", name, args }, ctx);
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
    const read = await timeEach(() => call("read_file", { path: "small.txt" }));
    const fsRead = await timeEach(() => readFileSync(path.join(ws, "small.txt"), "utf8"));
    return [
      result(`bash tool "true" (${mode})`, bash, bare, "baseline: /bin/true via runProcess"),
      result(`bash "true" + intent/result appends`, recorded, bare, "sandbox + 2 SQLite appends (FULL sync)"),
      result(`read_file 300 B (${mode})`, read, fsRead, "baseline: fs.readFileSync"),
    ];
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(formatBenchTable(await benchTools()));
}
