import type { AllowedImport } from "./import-rules.js";

/**
 * Known import-rule violations that other work in flight removes (issue 11). Each entry names who
 * removes it. The integrator empties this list after merging; an entry whose import is gone fails the
 * check, so the list can only shrink. Never add to it to make a new violation pass.
 */
export const allowedImports: readonly AllowedImport[] = [
  // A cycle: the repair turn calls back into the loop.
  {
    from: "src/agent/self-check/repair-turn.ts",
    to: "src/agent/agent-loop.ts",
    owner: "helper agent (issue 11: core/agent-decider.ts, no special case per tool in the loop)",
  },
  // agent/ and builders/ share one level: the builder choice moves to runner/, the model's types below both.
  {
    from: "src/agent/agent-builder.ts",
    to: "src/builders/builder.ts",
    owner: "helper agent (issue 11: the builder choice external | agent belongs to runner/)",
  },
  {
    from: "src/builders/builder.ts",
    to: "src/agent/model.ts",
    owner: "helper agent (issue 11: builders/builder.ts → agent/model.ts)",
  },
  // Not in the review's list: the judge (level 3) calls the model adapter of agent/ (level 4).
  {
    from: "src/judge/judge.ts",
    to: "src/agent/model.ts",
    owner:
      "helper agent, or the integrator: with builders → agent/model.ts, the model adapter's interface moves below judge/",
  },
  {
    from: "src/judge/judge.ts",
    to: "src/agent/generate-within.ts",
    owner: "helper agent, or the integrator: generateWithin moves with the model adapter's interface",
  },
];
