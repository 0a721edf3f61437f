import type { NotifyKind, NotifyRetry, NotifyTarget } from "../events/goal/notify-events.js";
import { backoffDelaySeconds } from "../kernel/backoff.js";

/**
 * What a goal's notifications owe, decided from its stream alone (pure: the clock and the derived runtime
 * facts are passed in). An occurrence has a key that every host computes the same from the log, so it is
 * recorded once however many hosts see it:
 * - a gate starts waiting on a person: `gate_waiting:GATE@R`, R the stream revision of the gate's last
 *   lifecycle fact (added, deferred, reopened, blocked): a deferred gate asked again is a new occurrence;
 * - terminal closure: `terminal@R`, R the revision of the closure intent (`goal_no_followup_declared`);
 * - blocked_health: `blocked_health@R`, R the revision of the goal's last fact that is not a turn's, a
 *   lease's or a notification's (health is observed, not stored: the episode is "since the goal last changed").
 * Each occurrence is owed once per target that listens to its kind; the notification id (occurrence and
 * target) is the idempotency key a target receives. A sent notification is never attempted again.
 */

/** A stored event as the fold reads it. */
export interface NotifyFact {
  type: string;
  revision: number;
  data: unknown;
}

/** One notification's delivery, folded from its facts. */
export interface NotificationState {
  id: string;
  due: DueData;
  /** Attempts claimed so far (the last claim's number). */
  attempts: number;
  /** The last claim without a result yet: by whom and until when. */
  inFlight: { attempt: number; by: string; until: string } | null;
  sent: { attempt: number; detail: string } | null;
  lastError: string | null;
  /** When the next attempt may start (null: now, or never once given up). */
  nextRetryAt: string | null;
  gaveUp: boolean;
}

/** The data of a `notification_due` (the stored shape). */
export interface DueData {
  notification_id: string;
  occurrence: string;
  kind: NotifyKind;
  target_id: string;
  gate_id?: string;
  todo_ids?: string[];
  goal_revision: number;
  text: string;
  command: string | null;
}

export interface NotifyState {
  goalId: string;
  targets: NotifyTarget[];
  items: Map<string, NotificationState>;
  /** Todo id → stream revision of its last lifecycle fact. */
  todoChangedAt: Map<string, number>;
  /** Revision of the last closure intent, or null. */
  closureIntentAt: number | null;
  /** Revision of the last fact that is not a turn's, a lease's or a notification's. */
  lastGoalFactAt: number;
  /** The stream's last revision. */
  revision: number;
}

const LIFECYCLE = new Set(["todo_added", "todo_deferred", "todo_reopened", "todo_blocked"]);

/** Folds a goal stream's facts into what its notifications need. */
export function foldNotify(events: readonly NotifyFact[]): NotifyState {
  const s: NotifyState = {
    goalId: "",
    targets: [],
    items: new Map(),
    todoChangedAt: new Map(),
    closureIntentAt: null,
    lastGoalFactAt: -1,
    revision: -1,
  };
  for (const e of events) {
    s.revision = e.revision;
    const d = e.data as Record<string, unknown>;
    if (!e.type.startsWith("turn_") && !e.type.startsWith("notification_")) s.lastGoalFactAt = e.revision;
    if (e.type === "goal_created") {
      s.goalId = String(d.goal_id);
      s.targets = (d.notify as NotifyTarget[] | undefined) ?? [];
    } else if (e.type === "goal_no_followup_declared") s.closureIntentAt = e.revision;
    else if (LIFECYCLE.has(e.type)) {
      const id = e.type === "todo_added" ? (d.todo as { id: string }).id : String(d.todo_id);
      s.todoChangedAt.set(id, e.revision);
    } else if (e.type === "notification_due") {
      const due = d as unknown as DueData;
      if (!s.items.has(due.notification_id))
        s.items.set(due.notification_id, {
          id: due.notification_id,
          due,
          attempts: 0,
          inFlight: null,
          sent: null,
          lastError: null,
          nextRetryAt: null,
          gaveUp: false,
        });
    } else if (e.type.startsWith("notification_")) {
      const item = s.items.get(String(d.notification_id));
      if (!item) continue; // a result for an obligation never recorded: nothing to apply it to
      const attempt = Number(d.attempt);
      if (e.type === "notification_attempted") {
        item.attempts = Math.max(item.attempts, attempt);
        item.inFlight = { attempt, by: String(d.by), until: String(d.until) };
      } else if (e.type === "notification_sent") {
        item.sent ??= { attempt, detail: String(d.detail) };
        item.inFlight = null;
      } else if (e.type === "notification_failed") {
        if (item.inFlight?.attempt === attempt) item.inFlight = null;
        item.lastError = String(d.error);
        item.nextRetryAt = (d.next_retry_at as string | null) ?? null;
        item.gaveUp = d.next_retry_at === null;
      }
    }
  }
  return s;
}

/** The derived facts an occurrence is read from: the runtime state, the gates asked now, closure. */
export interface NotifyFacts {
  runtimeState: string;
  runtimeReason: string;
  /** The gates asked now (core/goal/gates.ts `pendingGates`). */
  gates: readonly { gateId: string; scope: string; content: string; covers: string[]; askedAgain: boolean }[];
  terminal: boolean;
  closureOutcome: string | null;
  /** How a person runs loopgate against this goal's store (`loopgate … --store X`): hints only. */
  cli: (args: string) => string;
}

/** An occurrence the goal is in now. */
export interface Occurrence {
  key: string;
  kind: NotifyKind;
  gateId?: string;
  todoIds?: string[];
  text: string;
  command: string | null;
}

/** The occurrences the goal is in now (each is owed once, whatever host sees it first). */
export function occurrences(s: NotifyState, f: NotifyFacts): Occurrence[] {
  const out: Occurrence[] = [];
  const goal = s.goalId;
  if (f.runtimeState === "blocked_health")
    out.push({
      key: `blocked_health@${s.lastGoalFactAt}`,
      kind: "blocked_health",
      text: `goal ${goal} is blocked_health: ${f.runtimeReason}`,
      command: f.cli(`goal status ${goal}`),
    });
  // A gate waits on a person when the goal waits on a decision (operator_gate: no work can run) and the
  // gate is asked now (open, or deferred and due). An open gate while other work still runs is not yet
  // waiting on anyone; blocked_health outranks it (a person is told about the health first).
  if (f.runtimeState === "operator_gate")
    for (const g of f.gates)
      out.push({
        key: `gate_waiting:${g.gateId}@${s.todoChangedAt.get(g.gateId) ?? 0}`,
        kind: "gate_waiting",
        gateId: g.gateId,
        todoIds: g.covers,
        text: `goal ${goal}: gate ${g.gateId} (${g.scope}) ${g.askedAgain ? "is asked again" : "waits on a person"}: ${g.content}`,
        command: f.cli(`gate approve ${goal} ${g.gateId}`),
      });
  if (f.terminal && s.closureIntentAt !== null)
    out.push({
      key: `terminal@${s.closureIntentAt}`,
      kind: "terminal",
      text: `goal ${goal} is closed (terminal${f.closureOutcome ? `, ${f.closureOutcome}` : ""})`,
      command: f.cli(`goal history ${goal}`),
    });
  return out;
}

/** The `notification_due` data owed now and not yet recorded: one per occurrence and listening target. */
export function dueNotifications(s: NotifyState, now: readonly Occurrence[]): DueData[] {
  const out: DueData[] = [];
  for (const o of now)
    for (const t of s.targets) {
      if (!t.on.includes(o.kind)) continue;
      const id = `${s.goalId}/${o.key}/${t.id}`;
      if (s.items.has(id)) continue;
      out.push({
        notification_id: id,
        occurrence: o.key,
        kind: o.kind,
        target_id: t.id,
        ...(o.gateId ? { gate_id: o.gateId } : {}),
        ...(o.todoIds ? { todo_ids: o.todoIds } : {}),
        goal_revision: s.revision,
        text: o.text,
        command: o.command,
      });
    }
  return out;
}

/** One attempt to make now. */
export interface Attempt {
  notification: NotificationState;
  target: NotifyTarget | null;
  attempt: number;
}

/**
 * The attempts that may start at `now`: owed, not sent, not given up, no live claim (a claim past its
 * `until` with no result is in doubt: tried again, so delivery is at least once), and the retry time come.
 */
export function readyAttempts(s: NotifyState, now: Date): Attempt[] {
  const out: Attempt[] = [];
  for (const n of s.items.values()) {
    if (n.sent || n.gaveUp) continue;
    if (n.inFlight && Date.parse(n.inFlight.until) > now.getTime()) continue;
    if (n.nextRetryAt && Date.parse(n.nextRetryAt) > now.getTime()) continue;
    out.push({
      notification: n,
      target: s.targets.find((t) => t.id === n.due.target_id) ?? null,
      attempt: n.attempts + 1,
    });
  }
  return out;
}

/** The earliest time a pending notification may be tried again (null: nothing pending). */
export function nextRetry(s: NotifyState): string | null {
  let best: string | null = null;
  for (const n of s.items.values()) {
    if (n.sent || n.gaveUp) continue;
    const at = n.inFlight ? n.inFlight.until : (n.nextRetryAt ?? null);
    if (at === null) return new Date(0).toISOString();
    if (best === null || Date.parse(at) < Date.parse(best)) best = at;
  }
  return best;
}

/** When attempt `attempt` failed at `now`: the next try's time, or null once the cap is reached. */
export function retryAt(policy: NotifyRetry, attempt: number, now: Date): string | null {
  if (attempt >= policy.max_attempts) return null;
  const wait = backoffDelaySeconds(attempt, {
    baseSeconds: policy.backoff_seconds,
    factor: 2,
    maxSeconds: policy.max_backoff_seconds,
  });
  return new Date(now.getTime() + wait * 1000).toISOString();
}

/** The default retry policy of a target: 5 attempts, 2 s doubling up to 10 min. */
export const DEFAULT_NOTIFY_RETRY: NotifyRetry = {
  max_attempts: 5,
  backoff_seconds: 2,
  max_backoff_seconds: 600,
};
