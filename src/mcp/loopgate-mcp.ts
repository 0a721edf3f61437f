import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { sourceGuardContext } from "../agent/self-check/self-check.js";
import { applyTodoWrite, currentPlan, renderPlan } from "../agent/todo/plan.js";
import { createTodoTool } from "../agent/todo/todo-tool.js";
import { noopBuilder } from "../builders/command-builder.js";
import { boundText } from "../core/bounded.js";
import type { EventData, LoopgateEvent } from "../core/events.js";
import { buildRequiredFix, type Feedback } from "../core/required-fix.js";
import { SelfCheckPlan, SelfCheckSubmission } from "../core/self-check/schemas.js";
import { guardPublicStrings } from "../core/self-check/source-guard.js";
import type { LoadedTask } from "../runner/load-task.js";
import { runTask } from "../runner/run-task.js";
import { runSandboxed, type SandboxMode } from "../sandbox/bubblewrap.js";
import { scrubbedEnv } from "../sandbox/environment.js";
import type { EventStore } from "../store/event-store.js";

/** The built-in agent's plan tool, for its description and argument schema (MCP runs its own write path). */
const todoTool = createTodoTool({ attempt: 1, events: () => [], checks: false });

/** What the MCP server works on: the task, the folder holding the work, and the store its verify runs go to. */
export interface LoopgateMcpOptions {
  loaded: LoadedTask;
  workspace: string;
  store: EventStore;
  storeDir: string;
  sandbox: SandboxMode;
  /** How long a step's check may run (default 60 s). */
  checkTimeoutMs?: number;
}

const text = (t: string, isError = false) => ({ content: [{ type: "text" as const, text: t }], isError });

/**
 * loopgate's protocol tools for any MCP client (Claude Code through --mcp-config, or another agent):
 * the plan tool with frozen step checks, the self-check submissions behind the Source Guard, the goal's
 * status, and `verify`, which runs the held-out gates now in a fresh environment and returns only what
 * each gate's `feedback` allows. Everything here is advisory to the agent except `verify`'s verdict,
 * which is a recorded run like `loopgate verify`.
 */
export function createLoopgateMcp(o: LoopgateMcpOptions): McpServer {
  const server = new McpServer({ name: "loopgate", version: "0.1.0" });
  const events: LoopgateEvent[] = [];
  const record = (type: "todo_written", data: EventData<"todo_written">) =>
    events.push({ id: randomUUID(), type, data, meta: { at: new Date().toISOString(), origin: "runtime" } });
  let plan: unknown = null;
  let lastVerify: { run_id: string; status: string; reason: string } | null = null;
  const guard = sourceGuardContext({
    env: process.env,
    allowEnv: [],
    hidden: o.loaded.hidden,
    nonPublic: [o.loaded.dir, o.storeDir],
  });

  server.registerTool(
    "todo_write",
    { description: todoTool.description, inputSchema: todoTool.schema },
    async (args) => {
      const w = applyTodoWrite(currentPlan(events), args.items);
      record("todo_written", { attempt: 1, call_id: randomUUID(), ...w });
      const lines = [renderPlan(w, true)];
      for (const step of w.completed) {
        const item = w.items.find((i) => i.content === step);
        if (!item?.check) continue;
        const r = await runCheck(o, item.check);
        lines.push(
          `loopgate ran the frozen check of ${JSON.stringify(step)}: \`${item.check}\` exited ${r.exitCode ?? "(none)"}${r.timedOut ? " (timed out)" : ""}: ${r.exitCode === 0 ? "verified" : "NOT verified"}`,
        );
      }
      return text(lines.join("\n"));
    },
  );

  server.registerTool(
    "self_check_plan_submit",
    {
      description: "Declare your self-check plan (advisory). Use only public task material.",
      inputSchema: SelfCheckPlan,
    },
    async (args) => {
      const g = guardPublicStrings(args, guard);
      if (g.status === "rejected") return text(`Source Guard rejected the plan: ${g.publicReason}`, true);
      plan = args;
      return text("self-check plan recorded (advisory: only loopgate's gates decide success)");
    },
  );

  server.registerTool(
    "self_check_submit",
    {
      description:
        "Submit your self-check (advisory; needs a plan first). Only loopgate's gates decide success.",
      inputSchema: SelfCheckSubmission,
    },
    async (args) => {
      if (plan === null) return text("submit a self-check plan first (self_check_plan_submit)", true);
      const g = guardPublicStrings(args, guard);
      if (g.status === "rejected")
        return text(`Source Guard rejected the self-check: ${g.publicReason}`, true);
      return text(`self-check recorded as ${args.status} (advisory; run verify for loopgate's verdict)`);
    },
  );

  server.registerTool(
    "goal_status",
    {
      description:
        "The task's goal, your plan's progress, and the last verify verdict (none until you run verify).",
    },
    async () => {
      const steps = currentPlan(events);
      const goal =
        o.loaded.task.goal?.all.map((p) =>
          Object.entries(p)
            .map(([k, v]) => `${k}: ${v}`)
            .join(""),
        ) ?? [];
      return text(
        JSON.stringify(
          {
            task: o.loaded.task.id,
            goal,
            plan: { steps: steps.length, completed: steps.filter((s) => s.status === "completed").length },
            last_verify: lastVerify,
            done: lastVerify?.status === "SUCCESS",
          },
          null,
          2,
        ),
      );
    },
  );

  server.registerTool(
    "verify",
    {
      description:
        "Run loopgate's held-out gates on the work now, in a fresh environment; returns the verdict and the required fix (only what each gate's feedback allows).",
    },
    async () => {
      const env = await runTask({
        loaded: o.loaded,
        builder: noopBuilder(),
        store: o.store,
        storeDir: o.storeDir,
        sandbox: o.sandbox,
        workFrom: o.workspace,
      });
      lastVerify = { run_id: env.run_id, status: env.status, reason: env.reason };
      if (env.status === "SUCCESS") return text(`SUCCESS (run ${env.run_id}): ${env.reason}`);
      const recorded = await o.store.readStream(`run-${env.run_id}`);
      const feedback: Record<string, Feedback> = Object.fromEntries(
        o.loaded.task.gates.map((g) => [g.id, g.feedback as Feedback]),
      );
      const fix = buildRequiredFix({
        attempt: 1,
        gates: recorded.flatMap((e) => (e.type === "gate_run_finished" ? [e.data] : [])),
        feedback,
        findings: recorded.flatMap((e) => (e.type === "finding_recorded" ? [e.data] : [])),
        deliverables: o.loaded.task.deliverables,
      });
      return text(`${env.status} (run ${env.run_id}). Required fix:\n\n${fix}`, true);
    },
  );
  return server;
}

/** A step's frozen check, run in loopgate's sandbox on the workspace (no network). */
async function runCheck(o: LoopgateMcpOptions, command: string) {
  const r = await runSandboxed(
    {
      argv: ["/bin/sh", "-c", command],
      cwd: o.workspace,
      writable: [o.workspace],
      readonly: [],
      env: scrubbedEnv({ home: "/tmp" }),
      network: false,
      timeoutMs: o.checkTimeoutMs ?? 60_000,
      maxOutputBytes: 4000,
    },
    o.sandbox,
  );
  return { exitCode: r.exitCode, timedOut: r.timedOut, output: boundText(r.output, 1000) };
}

export const mcpStoreDir = (loaded: LoadedTask) => join(loaded.dir, ".loopgate");
