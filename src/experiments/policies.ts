import type { LoopgateEvent } from "../core/events/loopgate-event.js";
import type { Envelope } from "../core/run/envelope.js";
import { isDifferentialGate, isSubprocessGate } from "../core/task/task.js";
import {
  type GateEnvironmentPolicy,
  pristineGateEnvironment,
} from "../runner/run/context/gate-environment-policy.js";
import type { LoadedTask } from "../runner/task-source/load-task.js";
import { asBuiltGateEnvironment } from "./as-built-policy.js";
import type { Policy } from "./manifest.js";

/** A policy's verdict on one run, in the envelope's vocabulary: TOOL_FAILURE is an execution failure. */
export type PolicyStatus = "SUCCESS" | "ESCALATED" | "TOOL_FAILURE";

/** How a policy's runs are configured: which gates, and how their environment is built. */
export interface PolicySetup {
  loaded: LoadedTask;
  gateEnvironment: GateEnvironmentPolicy;
}

/**
 * Configures a task for a policy, on a private copy.
 * - `loopgate`, `trust-claim`: the task as it is, gate environments built by loopgate's own policy.
 * - `overlay`: every gate, run on the builder's final tree with the held-out overlay copied over it.
 * - `in-workspace-tests`: only the gates without held-out material (visible tests and static checks,
 *   which a harness can run without it; not held-out overlays, not differential gates), on the builder's final tree.
 */
export function setupPolicy(policy: Policy, loaded: LoadedTask): PolicySetup {
  const copy = structuredClone(loaded);
  if (policy === "in-workspace-tests" || ownHook(policy))
    copy.task.gates = copy.task.gates.filter(
      (g) => !(isSubprocessGate(g) && g.heldout) && !isDifferentialGate(g),
    );
  const asBuilt = policy === "overlay" || policy === "in-workspace-tests" || ownHook(policy);
  return { loaded: copy, gateEnvironment: asBuilt ? asBuiltGateEnvironment : pristineGateEnvironment };
}

/** What a builder said at the end of one attempt, and whether it exited cleanly. */
export interface FinalMessage {
  attempt: number;
  exitedCleanly: boolean;
  text: string;
}

const SUCCESS_WORDS =
  /\b(?:all )?tests? (?:now )?pass(?:ed|es|ing)?\b|\b(?:fixed|done|completed?|resolved|implemented|works)\b|- \[x\]/i;
const FAILURE_WORDS =
  /(?<!\b(?:0|no|zero) )\b(?:fail(?:ed|s|ing|ures?)?|not (?:fixed|done|working|passing)|couldn'?t|cannot|unable)\b/i;

/** The last non-blank line of a message: what a harness that trusts the claim reads. */
export function finalLine(text: string): string {
  return (
    text
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean)
      .at(-1) ?? ""
  );
}

/** True when a message claims the work is done (and does not also admit a failure). */
export function claimsSuccess(text: string): boolean {
  return SUCCESS_WORDS.test(text) && !FAILURE_WORDS.test(text);
}

/**
 * The builder's final message per attempt, from the recorded events: an external builder's claim and
 * exit status, or the built-in agent's last answer without tool calls (it "exits" cleanly unless its
 * model failed). Claims are read here only to measure the trust-claim baseline.
 */
export function finalMessages(events: readonly LoopgateEvent[]): FinalMessage[] {
  const byAttempt = new Map<number, FinalMessage>();
  const get = (attempt: number) => {
    let m = byAttempt.get(attempt);
    if (!m) {
      m = { attempt, exitedCleanly: false, text: "" };
      byAttempt.set(attempt, m);
    }
    return m;
  };
  const modelFailed = new Set<number>();
  for (const e of events) {
    if (e.type === "builder_finished") {
      get(e.data.attempt).exitedCleanly = e.data.exit_code === 0 && !e.data.timed_out;
    } else if (e.type === "claim_recorded") {
      get(e.data.attempt).text = e.data.text;
    } else if (e.type === "model_responded" && e.data.tool_calls.length === 0) {
      const m = get(e.data.attempt);
      m.text = e.data.text;
      m.exitedCleanly = !modelFailed.has(e.data.attempt);
    } else if (e.type === "model_failed" && !e.data.retryable) {
      modelFailed.add(e.data.attempt);
      get(e.data.attempt).exitedCleanly = false;
    }
  }
  return [...byAttempt.values()].sort((a, b) => a.attempt - b.attempt);
}

/** A policy's verdict with a one-line reason. */
export interface PolicyVerdict {
  status: PolicyStatus;
  reason: string;
}

/**
 * Judges one run under a policy.
 * - `loopgate`: the envelope's own status (gates on the final attempt, blocking findings, caps).
 * - `overlay`, `in-workspace-tests`: every gate of the configured task passed on one attempt (the first such
 *   ends it); findings are ignored, as a harness without loopgate's observation has none.
 * - `trust-claim`: done at the first attempt whose builder exited 0 and whose final message (its last
 *   non-blank line) claims success.
 * An execution failure (the envelope's TOOL_FAILURE) stays TOOL_FAILURE, except for a trust-claim run
 * whose builder had already claimed success (that harness would have stopped there).
 */
export function judgeRun(
  policy: Policy,
  envelope: Envelope,
  events: readonly LoopgateEvent[],
  gateIds: readonly string[],
): PolicyVerdict {
  if (policy === "trust-claim") {
    const claimed = finalMessages(events).find((m) => m.exitedCleanly && claimsSuccess(finalLine(m.text)));
    if (claimed)
      return {
        status: "SUCCESS",
        reason: `attempt ${claimed.attempt} claimed: ${finalLine(claimed.text).slice(0, 120)}`,
      };
    if (envelope.status === "TOOL_FAILURE") return { status: "TOOL_FAILURE", reason: envelope.reason };
    return { status: "ESCALATED", reason: "the builder never exited 0 with a claim of success" };
  }
  if (ownHook(policy) && envelope.status !== "TOOL_FAILURE") {
    // The builder is the agent with its own Stop hook; it exits 0 when that hook let it stop
    // (agent-builders.ts, codex-own-hook.ts).
    const agent = policy === "claude-stop-hook" ? "Claude Code" : "Codex";
    const first = events.find((e) => e.type === "builder_finished" && e.data.attempt === 1);
    const ok = first?.type === "builder_finished" && first.data.exit_code === 0 && !first.data.timed_out;
    return ok
      ? { status: "SUCCESS", reason: `${agent} stopped; its own Stop hook (the visible tests) let it` }
      : {
          status: "ESCALATED",
          reason: `${agent}'s own Stop hook blocked its last stop, or the session failed`,
        };
  }
  if (envelope.status === "TOOL_FAILURE" || policy === "loopgate")
    return { status: envelope.status, reason: envelope.reason };
  // Such a harness stops at the first attempt whose gates all passed (loopgate may go on past one whose
  // findings block it); otherwise the final attempt's failures are the reason.
  for (let a = 1; a <= envelope.attempts; a++) {
    const runs = envelope.gates.filter((g) => g.attempt === a && gateIds.includes(g.id));
    if (gateIds.every((id) => runs.some((g) => g.id === id)) && runs.every((g) => g.passed))
      return { status: "SUCCESS", reason: `all ${gateIds.length} gates passed on attempt ${a}` };
  }
  const last = envelope.attempts;
  const final = envelope.gates.filter((g) => g.attempt === last && gateIds.includes(g.id));
  const missing = gateIds.filter((id) => !final.some((g) => g.id === id));
  const failed = final.filter((g) => !g.passed).map((g) => `${g.id}${g.error ? ` (${g.error})` : ""}`);
  const parts = [
    ...(failed.length ? [`failed: ${failed.join(", ")}`] : []),
    ...(missing.length ? [`not run: ${missing.join(", ")}`] : []),
  ];
  return { status: "ESCALATED", reason: `attempt ${last}: ${parts.join("; ") || envelope.reason}` };
}

/** The policies whose builder is a real agent gated only by its own project Stop hook. */
function ownHook(policy: Policy): boolean {
  return policy === "claude-stop-hook" || policy === "codex-stop-hook";
}
