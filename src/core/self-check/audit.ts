import type { SelfCheckPlan, SelfCheckSubmission } from "./schemas.js";

/** Why the self-check does not make the attempt semantically complete. Every one blocks. */
export const BLOCKER_CODES = [
  "missing_self_check",
  "missing_self_check_plan",
  "status_fail",
  "status_inconclusive",
  "stale",
  "uncovered_artifact",
  "evidence_unknown_call",
  "evidence_mismatch",
  "cited_call_failed",
  "artifact_mismatch",
  "unplanned_added_path",
  "scratch_escape",
  "reported_side_effects",
] as const;
export type BlockerCode = (typeof BLOCKER_CODES)[number];

export interface Blocker {
  code: BlockerCode;
  /** Public facts only: codes, workspace paths, tool-call ids. */
  detail: string;
}

/** An evidence check made when the self-check was submitted, against loopgate's own records. */
export interface EvidenceFinding {
  code: "evidence_unknown_call" | "evidence_mismatch" | "cited_call_failed" | "artifact_mismatch";
  detail: string;
}

/** A tool call as loopgate recorded it. */
export interface RecordedCall {
  name: string;
  exitCode: number | null;
  isError: boolean;
  subject: string;
  content: string;
}

/** A path as loopgate's observation saw it. */
export interface ObservedFile {
  type: string;
  size: number;
  hash: string;
}

/** Workspace-relative form of a path the model gave; absolute paths stay absolute. */
export function normalizePath(p: string): string {
  let s = p.trim().replace(/\/+/g, "/");
  while (s.startsWith("./")) s = s.slice(2);
  if (s.length > 1 && s.endsWith("/")) s = s.slice(0, -1);
  return s;
}

const ws = (s: string) => s.replace(/\s+/g, " ").trim();

/**
 * Checks the cited evidence against loopgate's records: each cited tool call must exist and its recorded
 * command, exit code and output must be what the claim says; each artifact must match the observation.
 * Returns the findings and the paths whose artifact evidence loopgate could confirm.
 */
export function verifyEvidence(
  check: SelfCheckSubmission,
  calls: ReadonlyMap<string, RecordedCall>,
  observed: ReadonlyMap<string, ObservedFile>,
): { findings: EvidenceFinding[]; verifiedArtifacts: string[] } {
  const findings: EvidenceFinding[] = [];
  for (const c of check.commandEvidence) {
    const r = calls.get(c.toolCallId);
    if (!r) {
      findings.push({ code: "evidence_unknown_call", detail: `no recorded tool call ${c.toolCallId}` });
      continue;
    }
    const diffs: string[] = [];
    if (ws(c.command) !== ws(r.subject)) diffs.push("command");
    if (c.exitCode !== undefined && c.exitCode !== r.exitCode)
      diffs.push(`exit code (claimed ${c.exitCode}, recorded ${r.exitCode})`);
    if (c.outputExcerpt !== undefined && !ws(r.content).includes(ws(c.outputExcerpt)))
      diffs.push("output excerpt");
    if (diffs.length)
      findings.push({
        code: "evidence_mismatch",
        detail: `${c.toolCallId}: the recorded result differs in ${diffs.join(", ")}`,
      });
    if (check.status === "pass" && (r.isError || r.exitCode !== 0))
      findings.push({
        code: "cited_call_failed",
        detail: `${c.toolCallId} failed (exit code ${r.exitCode}) but is cited for a pass`,
      });
  }
  const verified: string[] = [];
  for (const a of check.artifactEvidence) {
    const p = normalizePath(a.path);
    const o = observed.get(p);
    const diffs: string[] = [];
    if (a.exists !== undefined && a.exists !== (o !== undefined)) diffs.push("existence");
    if (o && a.sizeBytes !== undefined && a.sizeBytes !== o.size) diffs.push("size");
    if (o && a.hash !== undefined && a.hash !== o.hash) diffs.push("hash");
    if (diffs.length)
      findings.push({ code: "artifact_mismatch", detail: `${p}: observed ${diffs.join(", ")} differ` });
    else if (o && o.type === "file") verified.push(p);
  }
  return { findings, verifiedArtifacts: [...new Set(verified)] };
}

const under = (p: string, root: string) => p === root || p.startsWith(`${root}/`);

/** Output locations a command writes to: `-o X`, `--output X`, `> X`, `>> X`, `tee X`. */
export function commandOutputs(command: string): string[] {
  const out: string[] = [];
  const re = /(?:(?:^|\s)(?:-o|--output)(?:\s+|=)|>>?\s*|\btee\s+(?:-a\s+)?)([^\s;&|<>]+)/g;
  for (const m of command.matchAll(re)) {
    const target = m[1];
    if (target && !target.startsWith("&") && target !== "/dev/null") out.push(normalizePath(target));
  }
  return out;
}

export interface AuditFinding {
  code:
    | "missing_self_check_plan"
    | "planned_final_artifact_added"
    | "unplanned_added_path"
    | "scratch_escape";
  path?: string;
  blocking: boolean;
}

/**
 * The plan consistency audit: loopgate's observed additions and the cited commands' outputs, against the
 * accepted plan. A declared final artifact or expected addition is only a diagnostic.
 */
export function auditPlanConsistency(
  plan: SelfCheckPlan | null,
  addedPaths: readonly string[],
  citedCommands: readonly string[],
  generatedArtifacts: readonly string[] = [],
): AuditFinding[] {
  if (!plan) return [{ code: "missing_self_check_plan", blocking: true }];
  const finals = plan.finalArtifacts.map((a) => normalizePath(a.path));
  const expected = plan.workspaceGuardPlan.expectedAdditions.map(normalizePath);
  const scratch = plan.selfCheckScratch.paths.map(normalizePath);
  const planned = [...finals, ...expected];
  const allowed = [...planned, ...scratch];
  const findings: AuditFinding[] = [];
  for (const raw of addedPaths) {
    const p = normalizePath(raw);
    if (planned.some((x) => under(p, x))) {
      findings.push({ code: "planned_final_artifact_added", path: p, blocking: false });
      continue;
    }
    // A folder that only holds planned paths, or anything under a scratch folder, is expected.
    if (allowed.some((x) => under(x, p)) || scratch.some((x) => under(p, x))) continue;
    findings.push({ code: "unplanned_added_path", path: p, blocking: true });
  }
  const outputs = [...citedCommands.flatMap(commandOutputs), ...generatedArtifacts.map(normalizePath)];
  for (const o of new Set(outputs))
    if (!allowed.some((x) => under(o, x))) findings.push({ code: "scratch_escape", path: o, blocking: true });
  return findings;
}

/** Everything loopgate knows about the attempt's self-check when it would end. */
export interface SelfCheckFacts {
  plan: SelfCheckPlan | null;
  check: {
    submission: SelfCheckSubmission;
    findings: readonly EvidenceFinding[];
    verifiedArtifacts: readonly string[];
    /** The recorded commands of the cited tool calls. */
    citedCommands: readonly string[];
  } | null;
  /** A mutating tool call was made after the latest self-check. */
  stale: boolean;
  /** Paths loopgate's observation diff says were added to the workspace. */
  addedPaths: readonly string[];
}

export interface SemanticStatus {
  status: "complete" | "incomplete";
  /** Self-check never decides SUCCESS; only the held-out gates do. */
  advisory: true;
  blockers: Blocker[];
  diagnostics: string[];
}

/** Semantic completion: complete only when an accepted, fresh, covered, clean `pass` exists. */
export function evaluateSemanticStatus(f: SelfCheckFacts): SemanticStatus {
  const blockers: Blocker[] = [];
  const diagnostics: string[] = [];
  const add = (code: BlockerCode, detail: string) => blockers.push({ code, detail: detail.slice(0, 500) });
  if (!f.check) add("missing_self_check", "no accepted self_check_submit in this attempt");
  const audit = auditPlanConsistency(
    f.plan,
    f.addedPaths,
    f.check?.citedCommands ?? [],
    f.check?.submission.artifactEvidence.filter((a) => a.kind === "generated").map((a) => a.path) ?? [],
  );
  for (const a of audit) {
    if (!a.blocking) diagnostics.push(`${a.code}: ${a.path ?? ""}`);
    else if (a.code === "missing_self_check_plan")
      add(a.code, "no accepted self_check_plan_submit in this attempt");
    else if (a.code !== "planned_final_artifact_added") add(a.code, a.path ?? "");
  }
  if (f.check) {
    const s = f.check.submission;
    if (s.status === "fail") add("status_fail", "the self-check reported fail");
    if (s.status === "inconclusive") add("status_inconclusive", "the self-check reported inconclusive");
    if (f.stale) add("stale", "the workspace was changed by a tool call after the latest self-check");
    for (const e of f.check.findings) add(e.code, e.detail);
    if (s.executionHygiene.remainingSideEffectPaths.length > 0)
      add("reported_side_effects", s.executionHygiene.remainingSideEffectPaths.slice(0, 5).join(", "));
    if (f.plan) {
      const verified = new Set(f.check.verifiedArtifacts);
      for (const a of f.plan.finalArtifacts) {
        const p = normalizePath(a.path);
        if (!verified.has(p)) add("uncovered_artifact", p);
      }
    }
  }
  return { status: blockers.length === 0 ? "complete" : "incomplete", advisory: true, blockers, diagnostics };
}
