import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { LoopgateEvent } from "../../core/events.js";
import type { Observation } from "../../core/observation.js";
import { diffObservations } from "../../core/observation.js";
import type { AgentEventBody } from "../../core/run-decider.js";
import { evaluateSemanticStatus, type RecordedCall, verifyEvidence } from "../../core/self-check/audit.js";
import { projectSelfCheck } from "../../core/self-check/facts.js";
import { decideRepair } from "../../core/self-check/repair-gate.js";
import { SelfCheckPlan, SelfCheckSubmission } from "../../core/self-check/schemas.js";
import {
  guardPublicStrings,
  heldoutFragments,
  SOURCE_GUARD_VERSION,
  type SourceGuardContext,
} from "../../core/self-check/source-guard.js";
import type { ToolCall } from "../model.js";
import { type ExecutedToolResult, executeToolCall } from "../tools/registry.js";
import type { AgentTool } from "../tools/tool.js";
import { toolOk } from "../tools/tool-result.js";

export const SELF_CHECK_PLAN_TOOL = "self_check_plan_submit";
export const SELF_CHECK_TOOL = "self_check_submit";

// The schemas validate; the loop records. `execute` only acknowledges: loopgate's checks happen in `submit`.
const ack = async () => toolOk("", "", performance.now());

export const selfCheckPlanTool: AgentTool<typeof SelfCheckPlan> = {
  name: SELF_CHECK_PLAN_TOOL,
  description:
    "Declare your self-check plan before checking: every final artifact (path, purpose, publicReason), a scratch " +
    "folder for check output (e.g. /tmp/loopgate-self-check), and the workspace paths you expect to add. " +
    "Use only public task material.",
  schema: SelfCheckPlan,
  mutating: false,
  execute: ack,
};

export const selfCheckTool: AgentTool<typeof SelfCheckSubmission> = {
  name: SELF_CHECK_TOOL,
  description:
    "Submit your self-check: status pass|fail|inconclusive, a publicReason, command evidence citing the " +
    "tool-call ids you ran (loopgate compares them with its records), artifact evidence for every final " +
    "artifact (loopgate compares it with the workspace), and executionHygiene. Advisory: only loopgate's " +
    "gates decide success. Any later workspace change makes it stale.",
  schema: SelfCheckSubmission,
  mutating: false,
  execute: ack,
};

export const selfCheckTools: AgentTool[] = [selfCheckPlanTool, selfCheckTool];

/** What the self-check needs from the run: loopgate's own observations and secrets, injected. */
export interface SelfCheckDeps {
  attempt: number;
  guard: SourceGuardContext;
  /** Observes the workspace now (loopgate's observer). */
  observe(): Promise<Observation>;
  /** The run's pristine observation, the "before" of the hygiene diff. */
  pristine(): Promise<Observation>;
  /** The repair cap (`budget.repairs`, default 1). */
  cap: number;
}

/** The agent loop's hook for the self-check tools and the repair gate. */
export interface SelfCheckHook {
  tools: readonly AgentTool[];
  handles(name: string): boolean;
  /** Validates, guards and checks a submission; `event` is what to record (null: nothing). */
  submit(
    call: ToolCall,
    events: readonly LoopgateEvent[],
  ): Promise<{ result: ExecutedToolResult; event: AgentEventBody | null }>;
  /** The repair gate over the attempt's events when the attempt would end. */
  gate(
    attemptEvents: readonly LoopgateEvent[],
    turn: number,
  ): Promise<Extract<AgentEventBody, { type: "repair_decided" }>>;
}

const reply = (base: ExecutedToolResult, content: string, isError: boolean): ExecutedToolResult => ({
  ...base,
  content,
  isError,
  exitCode: isError ? null : 0,
});

export function createSelfCheck(d: SelfCheckDeps): SelfCheckHook {
  const guard = (v: unknown) => guardPublicStrings(v, d.guard);
  return {
    tools: selfCheckTools,
    handles: (name) => name === SELF_CHECK_PLAN_TOOL || name === SELF_CHECK_TOOL,
    async submit(call, events) {
      const base = await executeToolCall(selfCheckTools, call, {
        workspace: "",
        sandbox: "none",
        network: false,
        timeoutMs: 0,
      });
      const subject = call.name;
      if (!base.valid) return { result: { ...base, subject }, event: null };
      const args = (call.name === SELF_CHECK_PLAN_TOOL ? SelfCheckPlan : SelfCheckSubmission).parse(
        call.args ?? {},
      );
      const g = guard(args);
      if (g.status === "rejected")
        return { result: reply({ ...base, subject }, g.publicReason, true), event: null };
      if (call.name === SELF_CHECK_PLAN_TOOL)
        return {
          result: reply({ ...base, subject }, "self-check plan recorded", false),
          event: {
            type: "self_check_plan_recorded",
            data: {
              attempt: d.attempt,
              call_id: call.id,
              plan: args as SelfCheckPlan,
              guard_version: SOURCE_GUARD_VERSION,
            },
          },
        };
      const check = args as SelfCheckSubmission;
      const calls = new Map<string, RecordedCall>();
      for (const e of events)
        if (e.type === "tool_call_finished" && e.data.valid)
          calls.set(e.data.call_id, {
            name: e.data.name,
            exitCode: e.data.exit_code,
            isError: e.data.is_error,
            subject: e.data.subject,
            content: e.data.content,
          });
      const now = await d.observe();
      const observed = new Map(
        now.entries.map((x) => [x.path, { type: x.type, size: x.size, hash: x.hash }]),
      );
      const v = verifyEvidence(check, calls, observed);
      const cited = check.commandEvidence.flatMap((c) => {
        const r = calls.get(c.toolCallId);
        return r ? [r.subject.slice(0, 4000)] : [];
      });
      const summary = v.findings.length
        ? `self-check recorded with ${v.findings.length} evidence finding(s):\n${v.findings.map((f) => `- ${f.code}: ${f.detail}`).join("\n")}`
        : "self-check recorded; its evidence matches loopgate's records";
      return {
        result: reply({ ...base, subject }, summary.slice(0, 4000), false),
        event: {
          type: "self_check_recorded",
          data: {
            attempt: d.attempt,
            call_id: call.id,
            check,
            guard_version: SOURCE_GUARD_VERSION,
            observation_id: now.id,
            evidence_findings: v.findings.slice(0, 100),
            verified_artifacts: v.verifiedArtifacts.slice(0, 100),
            cited_commands: cited.slice(0, 50),
          },
        },
      };
    },
    async gate(attemptEvents, turn) {
      const diff = diffObservations(await d.pristine(), await d.observe());
      const p = projectSelfCheck(attemptEvents, guard, [...diff.added, ...diff.typeChanged]);
      const status = evaluateSemanticStatus(p.facts);
      const decision = decideRepair({ blockers: status.blockers, repairsUsed: p.repairsUsed, cap: d.cap });
      return {
        type: "repair_decided",
        data: {
          attempt: d.attempt,
          turn,
          decision,
          semantic_status: status.status,
          blockers: status.blockers.slice(0, 200),
          repairs_used: p.repairsUsed,
          cap: d.cap,
          warnings: p.warnings.slice(0, 50),
        },
      };
    },
  };
}

const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION)/i;

/** loopgate's own knowledge of what is not public: the environment's secrets and the hidden files. */
export function sourceGuardContext(opts: {
  env: NodeJS.ProcessEnv;
  allowEnv: readonly string[];
  hidden: readonly string[];
  nonPublic: readonly string[];
}): SourceGuardContext {
  const secrets = new Set<string>();
  for (const [k, v] of Object.entries(opts.env))
    if (v && v.length >= 8 && (SECRET_NAME.test(k) || opts.allowEnv.includes(k))) secrets.add(v);
  const heldoutPaths = new Set<string>(opts.hidden);
  const heldoutContent = new Set<string>();
  let budget = 4_000_000;
  const walk = (root: string, p: string) => {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      for (const name of readdirSync(p)) walk(root, join(p, name));
      return;
    }
    const rel = relative(root, p);
    if (rel?.includes("/")) heldoutPaths.add(rel);
    if (st.isFile() && st.size <= 256_000 && budget > 0) {
      budget -= st.size;
      for (const f of heldoutFragments(readFileSync(p, "utf8"))) heldoutContent.add(f);
    }
  };
  for (const h of opts.hidden) walk(h, h);
  return {
    secrets: [...secrets],
    heldoutPaths: [...heldoutPaths],
    heldoutContent: [...heldoutContent],
    nonPublicPaths: [...opts.nonPublic],
  };
}
