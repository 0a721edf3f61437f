import type { AttestedEvidence, GoalEventBody } from "../events/goal/goal-events.js";
import { GOAL_LIMITS } from "../events/goal/goal-events.js";
import { boundText } from "../kernel/bounded.js";
import { fail, need } from "./command-checks.js";
import { scopeWaits } from "./gates.js";
import type { GoalState } from "./goal-state-shape.js";
import { dependencyResolved } from "./todo-rules.js";

/**
 * A person's step, recorded on the person's word with evidence (operator origin, never a run's verdict):
 * - `done`: a user_action (or a blocker without a task) is done — "I published", with the link or the file;
 *   its decisions and dependencies must be in place, as for any completion;
 * - `blocker_accepted`: a blocked todo's blocker is accepted as its terminal outcome (a verified blocker):
 *   the evidence may be a goal run of the todo's own task on the current revision that did not pass.
 * Evidence is required; a note says what was done or found.
 */
export interface AttestCommand {
  type: "attest_todo";
  todoId: string;
  outcome: "done" | "blocker_accepted";
  note: string;
  by?: string;
  evidence: AttestedEvidence[];
}

export function decideAttest(cmd: AttestCommand, state: GoalState): GoalEventBody[] {
  const c = "attest_todo";
  const t = need(state, cmd.todoId, c);
  if (!cmd.note.trim()) fail(`${c}: rule attest_needs_note: say what was done or found (--note TEXT)`);
  if (cmd.evidence.length === 0)
    fail(
      `${c}: rule attest_needs_evidence: ${t.id} needs evidence of the step (--evidence-url URL or --evidence-file FILE)`,
    );
  if (cmd.outcome === "done") {
    if (t.class !== "user_action" && !(t.class === "blocker" && t.task === null))
      fail(
        `${c}: rule done_needs_receipt: ${t.id} is a ${t.class}${t.task ? " with a task" : ""}; only a user_action or a task-less blocker is done on a person's word (a task's todo is done on its run's SUCCESS, a gate by its decision)`,
      );
    if (t.status !== "open")
      fail(`${c}: rule open_to_done: ${t.id} is ${t.status}; only an open todo is done`);
    const waits = scopeWaits(state, t);
    if (waits.length)
      fail(
        `${c}: rule decision_scope: ${t.id} needs ${waits.map((w) => `scope ${w.scope} (${w.status})`).join(", ")} approved first`,
      );
    const open = t.dependsOn.filter((d) => !dependencyResolved(state, d));
    if (open.length) fail(`${c}: rule depends_on: ${t.id} depends on ${open.join(", ")}, not done yet`);
    if (cmd.evidence.some((e) => e.kind === "run"))
      fail(
        `${c}: a person's step is attested by a link or a file; a run proves a task's todo (todo done --evidence RUN)`,
      );
  } else {
    if (t.class === "user_gate")
      fail(
        `${c}: ${t.id} is a user_gate: it is decided (gate approve|reject|cancel), not accepted as blocked`,
      );
    if (t.status !== "blocked")
      fail(
        `${c}: rule blocker_accepted_from_blocked: ${t.id} is ${t.status}; block it first (todo block --reason), then accept its blocker`,
      );
    for (const e of cmd.evidence) {
      if (e.kind !== "run") continue;
      const r = e.receipt;
      if (r.goal_id !== state.goalId)
        fail(
          `${c}: rule receipt_matches_goal: run ${r.run_id} was for goal ${r.goal_id}, not ${state.goalId}`,
        );
      if (r.goal_revision !== state.revision)
        fail(
          `${c}: rule receipt_on_current_revision: run ${r.run_id} ran on ${r.goal_revision}, not the current ${state.revision}`,
        );
      if (t.task && r.task_digest !== t.task.digest)
        fail(`${c}: rule receipt_matches_task: run ${r.run_id} ran ${r.task_id}, not ${t.id}'s task`);
      if (r.status === "SUCCESS")
        fail(
          `${c}: run ${r.run_id} is a SUCCESS: it proves the work can be done, not that it is blocked (reopen ${t.id} and complete it)`,
        );
    }
  }
  return [
    {
      type: "todo_attested",
      data: {
        todo_id: t.id,
        outcome: cmd.outcome,
        note: boundText(cmd.note, GOAL_LIMITS.reason),
        ...(cmd.by ? { by: cmd.by.slice(0, GOAL_LIMITS.name) } : {}),
        evidence: cmd.evidence,
      },
    },
  ];
}
