import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  auditPlanConsistency,
  BLOCKER_CODES,
  type Blocker,
  evaluateSemanticStatus,
  type SelfCheckFacts,
  verifyEvidence,
} from "../../../src/core/self-check/audit.js";
import { decideRepair, repairPrompt } from "../../../src/core/self-check/repair-gate.js";
import { SelfCheckPlan, SelfCheckSubmission } from "../../../src/core/self-check/schemas.js";
import { guardPublicStrings, type SourceGuardContext } from "../../../src/core/self-check/source-guard.js";

const plan = (finals: string[] = ["lib/answer.js"], expected: string[] = []) =>
  SelfCheckPlan.parse({
    finalArtifacts: finals.map((path) => ({
      path,
      purpose: "deliverable",
      publicReason: "asked by the task",
    })),
    selfCheckScratch: { paths: ["/tmp/loopgate-self-check"], cleanup: true },
    workspaceGuardPlan: { commands: ["git status"], expectedAdditions: expected },
  });
const hygiene = {
  sandboxRoot: "/tmp/loopgate-self-check",
  strategy: "scratch_dir",
  outputPolicy: "scratch_only",
  scratchUsed: true,
  cleanupRan: true,
  workspaceSideEffects: "none",
} as const;
const submission = (status: "pass" | "fail" | "inconclusive" = "pass", extra: object = {}) =>
  SelfCheckSubmission.parse({
    status,
    publicReason: "the visible tests pass",
    commandEvidence: [{ toolCallId: "c1", command: "node --test test/", exitCode: 0 }],
    artifactEvidence: [{ path: "lib/answer.js", kind: "final", exists: true }],
    executionHygiene: hygiene,
    ...extra,
  });
const clean = (): SelfCheckFacts => ({
  plan: plan(),
  check: {
    submission: submission(),
    findings: [],
    verifiedArtifacts: ["lib/answer.js"],
    citedCommands: ["node --test test/"],
  },
  stale: false,
  addedPaths: [],
});

const ck = (f: SelfCheckFacts) => {
  if (!f.check) throw new Error("no self-check");
  return f.check;
};

describe("schemas: the seed's bounds on every field", () => {
  it("a plan needs at least one final artifact; an invalid submission is refused", () => {
    expect(SelfCheckPlan.safeParse({ ...plan(), finalArtifacts: [] }).success).toBe(false);
    expect(SelfCheckSubmission.safeParse({ ...submission(), publicReason: "x".repeat(2001) }).success).toBe(
      false,
    );
    expect(SelfCheckSubmission.safeParse({ ...submission(), status: "done" }).success).toBe(false);
    expect(
      SelfCheckSubmission.safeParse({ ...submission(), commandEvidence: [], artifactEvidence: [] }).success,
    ).toBe(false);
    expect(SelfCheckSubmission.safeParse({ ...submission(), surprise: 1 }).success).toBe(false);
  });
});

describe("the repair gate, given/when/then", () => {
  it("given a clean, fresh, covered pass, when the attempt would end, then allow", () => {
    const s = evaluateSemanticStatus(clean());
    expect(s).toMatchObject({ status: "complete", advisory: true, blockers: [] });
    expect(decideRepair({ blockers: s.blockers, repairsUsed: 0, cap: 1 })).toBe("allow");
  });
  const cases: [string, (f: SelfCheckFacts) => SelfCheckFacts, string][] = [
    ["no self-check", (f) => ({ ...f, check: null }), "missing_self_check"],
    ["no plan", (f) => ({ ...f, plan: null }), "missing_self_check_plan"],
    ["status fail", (f) => ({ ...f, check: { ...ck(f), submission: submission("fail") } }), "status_fail"],
    [
      "status inconclusive",
      (f) => ({ ...f, check: { ...ck(f), submission: submission("inconclusive") } }),
      "status_inconclusive",
    ],
    ["an edit after the self-check", (f) => ({ ...f, stale: true }), "stale"],
    [
      "two artifacts, one produced",
      (f) => ({ ...f, plan: plan(["lib/answer.js", "lib/other.js"]) }),
      "uncovered_artifact",
    ],
    [
      "a cited call that never ran",
      (f) => ({ ...f, check: { ...ck(f), findings: [{ code: "evidence_unknown_call", detail: "x" }] } }),
      "evidence_unknown_call",
    ],
    [
      "a cited call that failed",
      (f) => ({ ...f, check: { ...ck(f), findings: [{ code: "cited_call_failed", detail: "x" }] } }),
      "cited_call_failed",
    ],
    ["an unplanned added path", (f) => ({ ...f, addedPaths: ["junk.txt"] }), "unplanned_added_path"],
    [
      "output written outside scratch",
      (f) => ({ ...f, check: { ...ck(f), citedCommands: ["node gen.js -o out/report.json"] } }),
      "scratch_escape",
    ],
    [
      "reported remaining side effects",
      (f) => ({
        ...f,
        check: {
          ...ck(f),
          submission: submission("pass", {
            executionHygiene: { ...hygiene, remainingSideEffectPaths: ["x.o"] },
          }),
        },
      }),
      "reported_side_effects",
    ],
  ];
  for (const [given, change, code] of cases)
    it(`given ${given}, then ${code} blocks: repair, then cap_reached`, () => {
      const s = evaluateSemanticStatus(change(clean()));
      expect(s.status).toBe("incomplete");
      expect(s.blockers.map((b) => b.code)).toContain(code);
      expect(decideRepair({ blockers: s.blockers, repairsUsed: 0, cap: 1 })).toBe("repair");
      expect(decideRepair({ blockers: s.blockers, repairsUsed: 1, cap: 1 })).toBe("cap_reached");
      expect(decideRepair({ blockers: s.blockers, repairsUsed: 0, cap: 0 })).toBe("cap_reached");
    });
  it("a planned final artifact added is only a diagnostic", () => {
    const s = evaluateSemanticStatus({ ...clean(), addedPaths: ["lib/answer.js", "lib"] });
    expect(s.status).toBe("complete");
    expect(s.diagnostics.join()).toContain("planned_final_artifact_added");
  });
  it("the repair prompt is templated from codes and public facts, and bounded", () => {
    const many: Blocker[] = Array.from({ length: 300 }, () => ({
      code: "unplanned_added_path",
      detail: "p".repeat(500),
    }));
    const text = repairPrompt(many, 0, 1);
    expect(text.length).toBeLessThanOrEqual(4000);
    expect(text).toContain("repair turn 1 of 1");
  });
});

describe("evidence is checked against loopgate's records (Target)", () => {
  const calls = new Map([
    ["c1", { name: "bash", exitCode: 0, isError: false, subject: "node --test test/", content: "# pass 1" }],
    ["c2", { name: "bash", exitCode: 1, isError: true, subject: "node --test test/", content: "# fail 1" }],
  ]);
  const observed = new Map([["lib/answer.js", { type: "file", size: 26, hash: "a".repeat(64) }]]);
  it("unknown ids, differing results, failed calls and artifact mismatches are findings", () => {
    const v = verifyEvidence(
      submission("pass", {
        commandEvidence: [
          { toolCallId: "nope", command: "node --test test/", exitCode: 0 },
          { toolCallId: "c2", command: "node --test test/", exitCode: 0 },
          { toolCallId: "c1", command: "node --test test/", outputExcerpt: "# pass 9" },
        ],
        artifactEvidence: [
          { path: "./lib/answer.js", kind: "final", sizeBytes: 99 },
          { path: "lib/missing.js", kind: "final", exists: true },
        ],
      }),
      calls,
      observed,
    );
    expect(v.findings.map((f) => f.code).sort()).toEqual([
      "artifact_mismatch",
      "artifact_mismatch",
      "cited_call_failed",
      "evidence_mismatch",
      "evidence_mismatch",
      "evidence_unknown_call",
    ]);
    expect(v.verifiedArtifacts).toEqual([]);
  });
  it("matching evidence verifies the artifact", () => {
    const v = verifyEvidence(submission(), calls, observed);
    expect(v).toEqual({ findings: [], verifiedArtifacts: ["lib/answer.js"] });
  });
  it("the audit names scratch escapes and unplanned paths", () => {
    const a = auditPlanConsistency(
      plan(["lib/a.js"], ["docs/new.md"]),
      ["docs/new.md", "x.log", "docs"],
      ["gcc main.c -o /tmp/loopgate-self-check/main", "node t.js > report.txt"],
    );
    expect(a.map((f) => [f.code, f.path, f.blocking])).toEqual([
      ["planned_final_artifact_added", "docs/new.md", false],
      ["unplanned_added_path", "x.log", true],
      ["scratch_escape", "report.txt", true],
    ]);
  });
});

describe("the Source Guard", () => {
  const secret = "s3cr3t-0123456789abcdef";
  const ctx: SourceGuardContext = {
    secrets: [secret],
    heldoutPaths: ["hidden/check.mjs"],
    heldoutContent: ["HELDOUT-abcdef123456"],
    nonPublicPaths: ["/var/lib/loopgate/runs/r1"],
  };
  const cases: [string, unknown, string][] = [
    ["a known secret", { a: `the key is ${secret}` }, "known_secret"],
    ["its base64", [Buffer.from(secret).toString("base64")], "known_secret"],
    ["its hex", Buffer.from(secret).toString("hex"), "known_secret"],
    ["a GitHub token", "ghp_0123456789abcdefghijklmnopqrstuvwxyz", "secret_pattern"],
    ["a private key", "-----BEGIN RSA PRIVATE KEY-----", "secret_pattern"],
    ["a held-out path", { path: "hidden/check.mjs" }, "heldout_path"],
    ["held-out content", { out: "saw // HELDOUT-abcdef123456" }, "heldout_content"],
    ["a run folder", "/var/lib/loopgate/runs/r1/pristine", "non_public_path"],
    ["a key file", "~/.ssh/id_rsa", "non_public_path"],
    ["a metadata key", { metadata: { [secret]: "x" } }, "known_secret"],
  ];
  for (const [what, value, category] of cases)
    it(`rejects ${what}`, () => {
      const g = guardPublicStrings(value, ctx);
      expect(g.status).toBe("rejected");
      expect(g.categories).toContain(category);
      expect(g.publicReason).not.toContain(secret);
    });
  it("accepts public task material", () => {
    expect(guardPublicStrings(plan(), ctx).status).toBe("accepted");
    expect(guardPublicStrings(submission(), ctx).status).toBe("accepted");
  });
});

describe("property: no sequence of submissions completes the status while a blocker holds", () => {
  const path = fc.constantFrom("lib/answer.js", "lib/other.js", "x.log", "/tmp/loopgate-self-check/o");
  const arbFacts = fc.record({
    plan: fc.option(
      fc.record({
        finals: fc.uniqueArray(path, { minLength: 1, maxLength: 3 }),
        expected: fc.array(path, { maxLength: 2 }),
      }),
      { nil: null },
    ),
    check: fc.option(
      fc.record({
        status: fc.constantFrom("pass", "fail", "inconclusive"),
        findings: fc.subarray([
          "evidence_unknown_call",
          "evidence_mismatch",
          "cited_call_failed",
          "artifact_mismatch",
        ] as const),
        verified: fc.uniqueArray(path, { maxLength: 3 }),
        commands: fc.array(
          fc.constantFrom("node --test", "node g.js -o out.json", "x > /tmp/loopgate-self-check/a"),
          {
            maxLength: 2,
          },
        ),
        remaining: fc.array(path, { maxLength: 1 }),
      }),
      { nil: null },
    ),
    stale: fc.boolean(),
    added: fc.array(path, { maxLength: 3 }),
  });
  it("complete implies: plan, fresh pass, no findings, every artifact covered, clean hygiene", () => {
    fc.assert(
      fc.property(arbFacts, fc.nat(3), fc.nat(3), (a, used, cap) => {
        const facts: SelfCheckFacts = {
          plan: a.plan ? plan(a.plan.finals, a.plan.expected) : null,
          check: a.check
            ? {
                submission: submission(a.check.status, {
                  executionHygiene: { ...hygiene, remainingSideEffectPaths: a.check.remaining },
                }),
                findings: a.check.findings.map((code) => ({ code, detail: "" })),
                verifiedArtifacts: a.check.verified,
                citedCommands: a.check.commands,
              }
            : null,
          stale: a.stale,
          addedPaths: a.added,
        };
        const s = evaluateSemanticStatus(facts);
        const held =
          !a.plan ||
          !a.check ||
          a.check.status !== "pass" ||
          a.stale ||
          a.check.findings.length > 0 ||
          a.check.remaining.length > 0 ||
          a.plan.finals.some((f) => !a.check?.verified.includes(f)) ||
          a.check.commands.some((c) => c.includes("out.json"));
        if (held) expect(s.status).toBe("incomplete");
        if (s.status === "complete") expect(s.blockers).toEqual([]);
        for (const b of s.blockers) expect(BLOCKER_CODES).toContain(b.code);
        const d = decideRepair({ blockers: s.blockers, repairsUsed: used, cap });
        expect(d === "allow").toBe(s.blockers.length === 0);
        if (d === "repair") expect(used).toBeLessThan(cap);
      }),
      { numRuns: 500 },
    );
  });
  it("unchanged blockers: the cap admits at most `cap` repairs", () => {
    fc.assert(
      fc.property(fc.nat(5), (cap) => {
        let used = 0;
        const blockers: Blocker[] = [{ code: "stale", detail: "" }];
        for (let i = 0; i < 20; i++)
          if (decideRepair({ blockers, repairsUsed: used, cap }) === "repair") used++;
        expect(used).toBe(cap);
      }),
    );
  });
});
