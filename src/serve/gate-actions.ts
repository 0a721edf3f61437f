import { z } from "zod";
import type { RecordedEvent } from "../core/events/loopgate-event.js";
import { parseResumeCondition } from "../core/goal/todo-rules.js";
import type { GoalIntent } from "../runner/goal/goal-engine.js";
import { writeGoal } from "../runner/goal/goal-service.js";
import { goalStream } from "../runner/goal/goal-store.js";
import type { EventStore } from "../store/kernel/event-store.js";

/** A person's decision on a gate, as the CLI's `gate approve|reject|cancel|defer` offers it. */
export const GATE_VERBS = ["approve", "reject", "cancel", "defer"] as const;
export type GateVerb = (typeof GATE_VERBS)[number];

/** A gate form as posted: the stream revision it was rendered from, the note, and defer's condition. */
export const GateForm = z.object({
  revision: z
    .string()
    .regex(/^\d{1,12}$/, "the stream revision the form was rendered from, a whole number")
    .transform(Number),
  note: z.string().max(1500, "a note holds at most 1500 characters").default(""),
  until: z.string().max(500).optional(),
  csrf: z.string().optional(),
});
export type GateForm = z.infer<typeof GateForm>;

/**
 * The intent of a gate decision, as `loopgate gate VERB` builds it. The note is the person's own; who
 * decided is the write's actor (meta.by, see recordGateDecision), never written into the note.
 */
export function gateIntent(verb: GateVerb, gateId: string, form: GateForm): GoalIntent {
  const note = form.note.trim();
  if (verb === "defer") {
    if (!form.until?.trim())
      throw new RangeError("defer needs a resume condition: todo:TODO=STATUS, gate:GATE=DECISION or at:TIME");
    return { kind: "gate_defer", gateId, until: parseResumeCondition(form.until, "until"), note };
  }
  return {
    kind: "gate",
    gateId,
    decision: verb === "approve" ? "approved" : verb === "reject" ? "rejected" : "cancelled",
    note,
  };
}

/**
 * Records a gate decision through the goal's one write path (runner/goal/goal-service.ts `writeGoal`, as
 * `loopgate gate` does): decided on the goal as it is, appended at the revision the form was rendered from
 * with origin operator and `who` (the signed-in credential's name) as its actor, meta.by. A stale form is
 * NeedsRebaseError (nothing written); a refused decision the decider's DomainError.
 */
export function recordGateDecision(
  store: EventStore,
  localDir: string,
  goalId: string,
  intent: GoalIntent,
  revision: number,
  who: string,
): Promise<{ revision: number; events: string[]; requeued?: string }> {
  return writeGoal(store, localDir, goalId, intent, revision, { by: who });
}

/** The goal's events after `revision`: what changed since a form was rendered. */
export async function changesSince(
  store: EventStore,
  goalId: string,
  revision: number,
): Promise<RecordedEvent[]> {
  return store.readStream(goalStream(goalId), { fromRevision: revision + 1, limit: 200 });
}
