import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { sourceGuardContext } from "../agent/self-check/self-check.js";
import { applyTodoWrite, currentPlan, renderPlan } from "../agent/todo/plan.js";
import { createTodoTool } from "../agent/todo/todo-tool.js";
import { noopBuilder } from "../builders/command-builder.js";
import type { EventData, LoopgateEvent } from "../core/events/loopgate-event.js";
import { boundText } from "../core/kernel/bounded.js";
import { buildRequiredFix, type Feedback } from "../core/run/required-fix.js";
import { type RecordedCall, verifyEvidence } from "../core/self-check/audit.js";
import { SelfCheckPlan, SelfCheckSubmission } from "../core/self-check/schemas.js";
import { guardPublicStrings } from "../core/self-check/source-guard.js";
import { runTask } from "../runner/run/run-task.js";
import type { LoadedTask } from "../runner/task-source/load-task.js";
import { runSandboxed, type SandboxMode } from "../sandbox/bubblewrap.js";
import { scrubbedEnv } from "../sandbox/environment.js";
import type { EventStore } from "../store/kernel/event-store.js";
import { mcpPlanStream, observeCited, recordedCalls } from "./evidence.js";

/** The built-in agent's plan tool, for its description and argument schema (MCP runs its own write path). */
const todoTool = createTodoTool({ attempt: 1, events: () => [], checks: false });

/** What the MCP server works on: the task, the folder holding the work, and the store its verify runs go to. */
export interface LoopgateMcpOptions {
  loaded: LoadedTask;
  workspace: string;
  store: EventStore;
  localDir: string;
  sandbox: SandboxMode;
  /** How long a step's check may run (default 60 s). */
  checkTimeoutMs?: number;
  /** The Claude Code session whose reported tool calls may be cited (default: $CLAUDE_CODE_SESSION_ID, else every session in the store). */
  sessionId?: string;
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
  const session = () => o.sessionId ?? process.env.CLAUDE_CODE_SESSION_ID;
  /** Each plan write, kept here and in the store (a TaskCompleted hook maps Claude's task to its step). */
  const record = async (type: "todo_written", data: EventData<"todo_written">) => {
    const e = {
      id: randomUUID(),
      type,
      data,
      meta: { at: new Date().toISOString(), origin: "runtime" as const },
    };
    events.push(e);
    await o.store.append(mcpPlanStream({ sessionId: session(), taskId: o.loaded.task.id }), [e], "any");
  };
  let plan: unknown = null;
  /** The frozen checks this server ran, by the call id it gave them: citable self-check evidence. */
  const ownCalls = new Map<string, RecordedCall>();
  let lastVerify: { run_id: string; status: string; reason: string } | null = null;
  const guard = sourceGuardContext({
    env: process.env,
    allowEnv: [],
    hidden: o.loaded.hidden,
    nonPublic: [o.loaded.dir, o.localDir],
  });

  server.registerTool(
    "todo_write",
    { description: todoTool.description, inputSchema: todoTool.schema },
    async (args) => {
      const w = applyTodoWrite(currentPlan(events), args.items);
      await record("todo_written", { attempt: 1, call_id: randomUUID(), ...w });
      const lines = [renderPlan(w, true)];
      for (const step of w.completed) {
        const item = w.items.find((i) => i.content === step);
        if (!item?.check) continue;
        const r = await runCheck(o, item.check);
        const id = `loopgate-check-${ownCalls.size + 1}`;
        ownCalls.set(id, {
          name: "check",
          exitCode: r.exitCode,
          isError: r.exitCode !== 0 || r.timedOut,
          subject: item.check,
          content: r.output,
        });
        lines.push(
          `loopgate ran the frozen check of ${JSON.stringify(step)} (call ${id}): \`${item.check}\` exited ${r.exitCode ?? "(none)"}${r.timedOut ? " (timed out)" : ""}: ${r.exitCode === 0 ? "verified" : "NOT verified"}`,
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
      // Evidence must be what loopgate recorded: a cited call it has no record of, or whose recorded
      // command, exit code or output differs from the claim, refuses the submission.
      const calls = await recordedCalls(o.store, ownCalls, session());
      const v = verifyEvidence(args, calls, observeCited(o.workspace, args));
      if (v.findings.length > 0)
        return text(
          `self-check refused: its evidence does not match loopgate's records (${v.findings.length} finding(s)):\n${v.findings.map((f) => `- ${f.code}: ${f.detail}`).join("\n")}\nCite only calls loopgate recorded (a Bash call reported by Claude Code's PostToolUse hook, by its tool_use_id, or a loopgate-check-N id), with their real command, exit code and output.`,
          true,
        );
      return text(
        `self-check recorded as ${args.status}; its evidence matches loopgate's records (advisory; run verify for loopgate's verdict)`,
      );
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
        localDir: o.localDir,
        sandbox: o.sandbox,
        workFrom: o.workspace,
      });
      // goal_status shows this to the agent: a failed run's reason names each gate's error and exit code,
      // which the code under test chooses, so only the required fix (bounded by feedback) speaks of it.
      lastVerify = {
        run_id: env.run_id,
        status: env.status,
        reason: env.status === "SUCCESS" ? env.reason : "not passed: see the required fix verify returned",
      };
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
