import { z } from "zod";

/** Bounds of the self-check submissions: they protect the log and the prompt, not the truth of the evidence. */
export const SELF_CHECK_BOUNDS = {
  reason: 2000,
  path: 1000,
  purpose: 500,
  command: 4000,
  excerpt: 4000,
  finalArtifacts: 20,
  scratchPaths: 10,
  guardCommands: 10,
  expectedAdditions: 50,
  commandEvidence: 20,
  artifactEvidence: 20,
  sideEffectPaths: 50,
  metadataEntries: 10,
  metadataValue: 500,
} as const;

const B = SELF_CHECK_BOUNDS;
const path = z.string().min(1).max(B.path);
const reason = z.string().min(1).max(B.reason);

export const SelfCheckPlan = z
  .object({
    finalArtifacts: z
      .array(z.object({ path, purpose: z.string().min(1).max(B.purpose), publicReason: reason }).strict())
      .min(1)
      .max(B.finalArtifacts),
    selfCheckScratch: z
      .object({
        /** Where inspection output goes, e.g. /tmp/loopgate-self-check/...; never a deliverable. */
        paths: z.array(path).min(1).max(B.scratchPaths),
        cleanup: z.boolean(),
        publicReason: reason.optional(),
      })
      .strict(),
    workspaceGuardPlan: z
      .object({
        /** Commands the model will run to inspect the workspace before and after checking. */
        commands: z.array(z.string().min(1).max(B.command)).max(B.guardCommands).default([]),
        /** Workspace paths the work is expected to add besides the final artifacts. */
        expectedAdditions: z.array(path).max(B.expectedAdditions).default([]),
        publicReason: reason.optional(),
      })
      .strict(),
  })
  .strict();
export type SelfCheckPlan = z.infer<typeof SelfCheckPlan>;

export const CommandEvidence = z
  .object({
    /** The loopgate tool-call id whose recorded result this cites. */
    toolCallId: z.string().min(1).max(128),
    command: z.string().min(1).max(B.command),
    exitCode: z.number().int().nullable().optional(),
    timedOut: z.boolean().optional(),
    outputExcerpt: z.string().max(B.excerpt).optional(),
    artifactRefs: z.array(path).max(B.artifactEvidence).optional(),
  })
  .strict();
export type CommandEvidence = z.infer<typeof CommandEvidence>;

export const ArtifactEvidence = z
  .object({
    path,
    kind: z.enum(["final", "generated", "input"]),
    exists: z.boolean().optional(),
    sizeBytes: z.number().int().nonnegative().optional(),
    hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, "sha256 hex")
      .optional(),
    metadata: z
      .record(z.string().max(100), z.string().max(B.metadataValue))
      .refine((m) => Object.keys(m).length <= B.metadataEntries, `at most ${B.metadataEntries} entries`)
      .optional(),
  })
  .strict();
export type ArtifactEvidence = z.infer<typeof ArtifactEvidence>;

export const ExecutionHygiene = z
  .object({
    sandboxRoot: path,
    strategy: z.enum(["scratch_dir", "copied_inputs", "read_only_deliverable_refs"]),
    outputPolicy: z.enum(["scratch_only", "read_only_deliverable_refs"]),
    scratchUsed: z.boolean(),
    scratchPath: path.optional(),
    cleanupRan: z.boolean(),
    workspaceSideEffects: z.enum(["none", "cleaned", "present", "unknown"]),
    remainingSideEffectPaths: z.array(path).max(B.sideEffectPaths).default([]),
  })
  .strict();
export type ExecutionHygiene = z.infer<typeof ExecutionHygiene>;

export const SelfCheckSubmission = z
  .object({
    status: z.enum(["pass", "fail", "inconclusive"]),
    publicReason: reason,
    commandEvidence: z.array(CommandEvidence).max(B.commandEvidence).default([]),
    artifactEvidence: z.array(ArtifactEvidence).max(B.artifactEvidence).default([]),
    executionHygiene: ExecutionHygiene,
  })
  .strict()
  .refine((s) => s.commandEvidence.length + s.artifactEvidence.length > 0, {
    message: "a self-check needs command or artifact evidence; the word pass is not evidence",
    path: ["commandEvidence"],
  });
export type SelfCheckSubmission = z.infer<typeof SelfCheckSubmission>;

/** Every string of a value (keys included), for the Source Guard. */
export function allStrings(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) allStrings(v, out);
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      allStrings(v, out);
    }
  return out;
}
