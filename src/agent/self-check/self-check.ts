import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { projectSelfCheck } from "../../core/agent/self-check-facts.js";
import type { LoopgateEvent } from "../../core/events/loopgate-event.js";
import type { Observation } from "../../core/observation/observation.js";
import { diffObservations } from "../../core/observation/observation.js";
import type { AgentEventBody } from "../../core/run/run-decider.js";
import { evaluateSemanticStatus, type RecordedCall, verifyEvidence } from "../../core/self-check/audit.js";
import { decideRepair } from "../../core/self-check/repair-gate.js";
import { SelfCheckPlan, SelfCheckSubmission } from "../../core/self-check/schemas.js";
import {
  guardPublicStrings,
  heldoutFragments,
  SOURCE_GUARD_VERSION,
  type SourceGuardContext,
} from "../../core/self-check/source-guard.js";
import type { AgentTool, ToolResult } from "../tools/tool.js";
import { elapsedMs } from "../tools/tool-result.js";

export const SELF_CHECK_PLAN_TOOL = "self_check_plan_submit";
export const SELF_CHECK_TOOL = "self_check_submit";

/** What the self-check needs from the run: loopgate's own observations, events and secrets, injected. */
export interface SelfCheckDeps {
  attempt: number;
  guard: SourceGuardContext;
  /** The run's events so far (the recorded tool calls a submission cites). */
  events(): readonly LoopgateEvent[];
  /** Observes the workspace now (loopgate's observer). */
  observe(): Promise<Observation>;
  /** The run's pristine observation, the "before" of the hygiene diff. */
  pristine(): Promise<Observation>;
  /** The repair cap (`budget.repairs`, default 1). */
  cap: number;
}

/** Heavy mode for the agent loop: the self-check tools (bound to the run) and the repair gate. */
export interface SelfCheckHook {
  tools: readonly AgentTool[];
  /** The repair gate over the attempt's events when the attempt would end. */
  gate(
    attemptEvents: readonly LoopgateEvent[],
    turn: number,
  ): Promise<Extract<AgentEventBody, { type: "repair_decided" }>>;
}

const reply = (subject: string, content: string, isError: boolean, started: number): ToolResult => ({
  content,
  isError,
  exitCode: isError ? null : 0,
  durationMs: elapsedMs(started),
  subject,
});

const PLAN_DESCRIPTION =
  "Declare your self-check plan before checking: every final artifact (path, purpose, publicReason), a scratch " +
  "folder for check output (e.g. /tmp/loopgate-self-check), and the workspace paths you expect to add. " +
  "Use only public task material.";
const CHECK_DESCRIPTION =
  "Submit your self-check: status pass|fail|inconclusive, a publicReason, command evidence citing the " +
  "tool-call ids you ran (loopgate compares them with its records), artifact evidence for every final " +
  "artifact (loopgate compares it with the workspace), and executionHygiene. Advisory: only loopgate's " +
  "gates decide success. Any later workspace change makes it stale.";

/**
 * The self-check tools, bound to the run: arguments are validated centrally (registry.ts), then guarded
 * by the Source Guard; an accepted submission is checked against loopgate's records and returned as its
 * fact. A rejected one is an error result with no fact.
 */
export function createSelfCheck(d: SelfCheckDeps): SelfCheckHook {
  const guard = (v: unknown) => guardPublicStrings(v, d.guard);
  const planTool: AgentTool<typeof SelfCheckPlan> = {
    name: SELF_CHECK_PLAN_TOOL,
    description: PLAN_DESCRIPTION,
    schema: SelfCheckPlan,
    mutating: false,
    facts: true,
    async execute(plan, ctx) {
      const started = performance.now();
      const g = guard(plan);
      if (g.status === "rejected")
        return { result: reply(SELF_CHECK_PLAN_TOOL, g.publicReason, true, started) };
      return {
        result: reply(SELF_CHECK_PLAN_TOOL, "self-check plan recorded", false, started),
        events: [
          {
            type: "self_check_plan_recorded",
            data: { attempt: d.attempt, call_id: ctx.callId, plan, guard_version: SOURCE_GUARD_VERSION },
          },
        ],
      };
    },
  };
  const checkTool: AgentTool<typeof SelfCheckSubmission> = {
    name: SELF_CHECK_TOOL,
    description: CHECK_DESCRIPTION,
    schema: SelfCheckSubmission,
    mutating: false,
    facts: true,
    async execute(check, ctx) {
      const started = performance.now();
      const g = guard(check);
      if (g.status === "rejected") return { result: reply(SELF_CHECK_TOOL, g.publicReason, true, started) };
      const calls = new Map<string, RecordedCall>();
      for (const e of d.events())
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
        result: reply(SELF_CHECK_TOOL, summary.slice(0, 4000), false, started),
        events: [
          {
            type: "self_check_recorded",
            data: {
              attempt: d.attempt,
              call_id: ctx.callId,
              check,
              guard_version: SOURCE_GUARD_VERSION,
              observation_id: now.id,
              evidence_findings: v.findings.slice(0, 100),
              verified_artifacts: v.verifiedArtifacts.slice(0, 100),
              cited_commands: cited.slice(0, 50),
            },
          },
        ],
      };
    },
  };
  return {
    tools: [planTool, checkTool],
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
