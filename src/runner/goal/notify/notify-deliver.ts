import { hostname } from "node:os";
import type { GoalEventBody } from "../../../core/events/goal/goal-events.js";
import { pendingGates } from "../../../core/goal/gates.js";
import {
  type Attempt,
  dueNotifications,
  foldNotify,
  type NotifyFact,
  nextRetry,
  occurrences,
  readyAttempts,
  retryAt,
} from "../../../core/goal/notify.js";
import { setLongTimeout } from "../../../core/kernel/long-timer.js";
import type { EventStore } from "../../../store/kernel/event-store.js";
import { goalState } from "../goal-engine.js";
import { openGoal } from "../goal-service.js";
import { appendGoal, NeedsRebaseError, readGoal } from "../goal-store.js";
import type { Tick } from "../turn/tick-outcome.js";
import { notificationBody, type SendOutcome, sendNotification } from "./notify-send.js";

/**
 * Carries out a goal's notifications (the rule is core/goal/notify.ts): records what is owed
 * (`notification_due`), claims each attempt at the stream's expected revision (`notification_attempted`:
 * of two hosts only one wins), sends it, and records the outcome (`notification_sent`, or
 * `notification_failed` with the next retry, or null at the cap). Called after a governed turn's ACK (the
 * tick returned), between turns of `goal run`, by the scheduler and by a worker's goal-turn job; a
 * restarted host finishes what its log says is due. Never throws and never fails a turn: a store error is
 * reported as a line and left for the next host.
 *
 * The contract is at least once, exactly once when nothing crashes: a sent notification is never
 * attempted again, but a crash between a target's answer and the `notification_sent` record leaves a claim
 * with no result, tried again once its claim expires, with the same idempotency key in the body.
 */

/** What one delivery pass reports (the CLI prints them as `notify:` lines). */
export type NotifyReport =
  | { kind: "due"; id: string; target: string; text: string }
  | { kind: "sent"; id: string; target: string; attempt: number; detail: string }
  | { kind: "failed"; id: string; target: string; attempt: number; error: string; nextRetryAt: string | null }
  | { kind: "error"; message: string };

export interface NotifyDeps {
  store: EventStore;
  localDir: string;
  clock?: () => Date;
  /** How a person would run `loopgate ARGS` against this store (the hints a notification carries). */
  cli?: (args: string) => string;
  /** Where a webhook's `url_env` is read, and what a command target inherits. */
  env?: NodeJS.ProcessEnv;
  /** Sleeps until the next retry while lingering. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  onReport?: (r: NotifyReport) => void;
}

export interface DeliverOptions {
  /** Wait for retries that come due within this many ms (0: make only the attempts due now). */
  lingerMs?: number;
  signal?: AbortSignal;
}

/** How long `goal run` and a worker's goal-turn job wait at their end for retries that come due. */
export const NOTIFY_LINGER_MS = 10_000;

/** How long a claim holds beyond the target's timeout before another host may try again. */
const CLAIM_SLACK_MS = 30_000;
/** A bound on one pass's rounds: every round records something or sends, so this is never reached in use. */
const MAX_ROUNDS = 200;

const sleepMs = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setLongTimeout(done, ms);
    function done() {
      t.clear();
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });

/** One delivery pass over a goal (see the file's comment). Returns what it did. */
export async function deliverNotifications(
  deps: NotifyDeps,
  goalId: string,
  opts: DeliverOptions = {},
): Promise<NotifyReport[]> {
  const reports: NotifyReport[] = [];
  const report = (r: NotifyReport) => {
    reports.push(r);
    deps.onReport?.(r);
  };
  try {
    await pass(deps, goalId, opts, report);
  } catch (e) {
    report({ kind: "error", message: `notifications of goal ${goalId}: ${(e as Error).message}` });
  }
  return reports;
}

async function pass(
  deps: NotifyDeps,
  goalId: string,
  opts: DeliverOptions,
  report: (r: NotifyReport) => void,
): Promise<void> {
  const clock = deps.clock ?? (() => new Date());
  const cli = deps.cli ?? ((a: string) => `loopgate ${a}`);
  const env = deps.env ?? process.env;
  const sleep = deps.sleep ?? sleepMs;
  const deadline = clock().getTime() + (opts.lingerMs ?? 0);
  const by = `${hostname()}:${process.pid}`;
  const append = (bodies: GoalEventBody[], expected: number) =>
    appendGoal(deps.store, goalId, bodies, expected, () => "runtime", clock);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    if (opts.signal?.aborted) return;
    const now = clock();
    const { log, view } = await openGoal(deps.store, deps.localDir, goalId, now);
    const ns = foldNotify(log.events as unknown as NotifyFact[]);
    if (ns.targets.length === 0) return;
    const state = goalState(log.events);
    const due = dueNotifications(
      ns,
      occurrences(ns, {
        runtimeState: view.runtimeState,
        runtimeReason: view.runtimeReason,
        gates: pendingGates(state, now),
        terminal: view.closed,
        closureOutcome: state.noFollowup?.outcome ?? null,
        cli,
      }),
    );
    if (due.length > 0) {
      try {
        await append(
          due.map((d) => ({ type: "notification_due", data: d })),
          log.revision,
        );
        for (const d of due)
          report({ kind: "due", id: d.notification_id, target: d.target_id, text: d.text });
      } catch (e) {
        if (!(e instanceof NeedsRebaseError)) throw e;
      }
      continue; // read again: another host may have recorded it first, which is as good
    }
    const next = readyAttempts(ns, now)[0];
    if (next) {
      const until = new Date(now.getTime() + (next.target?.timeout_seconds ?? 0) * 1000 + CLAIM_SLACK_MS);
      try {
        await append(
          [
            {
              type: "notification_attempted",
              data: {
                notification_id: next.notification.id,
                attempt: next.attempt,
                by,
                until: until.toISOString(),
              },
            },
          ],
          log.revision,
        );
      } catch (e) {
        if (!(e instanceof NeedsRebaseError)) throw e;
        continue; // another host claimed it (or wrote something): decide again on what it wrote
      }
      const outcome: SendOutcome = next.target
        ? await sendNotification(
            next.target,
            notificationBody(goalId, next.notification.due, next.attempt),
            env,
          )
        : { ok: false, error: `no target ${next.notification.due.target_id} in the goal's notify list` };
      await recordOutcome(deps, goalId, next, outcome, clock, report);
      continue;
    }
    const retry = nextRetry(ns);
    if (retry === null || Date.parse(retry) > deadline) return;
    await sleep(Math.max(0, Date.parse(retry) - clock().getTime()) + 50, opts.signal);
  }
}

/** Records an attempt's outcome at the stream's current revision (a result never conflicts in meaning). */
async function recordOutcome(
  deps: NotifyDeps,
  goalId: string,
  a: Attempt,
  outcome: SendOutcome,
  clock: () => Date,
  report: (r: NotifyReport) => void,
): Promise<void> {
  const max = a.target?.retry.max_attempts ?? a.attempt;
  const nextRetryAt = outcome.ok ? null : a.target ? retryAt(a.target.retry, a.attempt, clock()) : null;
  const body: GoalEventBody = outcome.ok
    ? {
        type: "notification_sent",
        data: { notification_id: a.notification.id, attempt: a.attempt, detail: outcome.detail },
      }
    : {
        type: "notification_failed",
        data: {
          notification_id: a.notification.id,
          attempt: a.attempt,
          error: outcome.error,
          max_attempts: max,
          next_retry_at: nextRetryAt,
        },
      };
  for (let i = 0; ; i++) {
    const { revision } = await readGoal(deps.store, deps.localDir, goalId);
    try {
      await appendGoal(deps.store, goalId, [body], revision, () => "runtime", clock);
      break;
    } catch (e) {
      if (!(e instanceof NeedsRebaseError) || i >= 8) throw e;
    }
  }
  const target = a.notification.due.target_id;
  if (outcome.ok)
    report({ kind: "sent", id: a.notification.id, target, attempt: a.attempt, detail: outcome.detail });
  else
    report({
      kind: "failed",
      id: a.notification.id,
      target,
      attempt: a.attempt,
      error: outcome.error,
      nextRetryAt,
    });
}

/** A tick that delivers the goal's notifications after each turn's ACK (after the tick returned). */
export function notifyingTick(tick: Tick, deps: NotifyDeps): Tick {
  return async (req) => {
    const outcome = await tick(req);
    await deliverNotifications(deps, req.goalId, req.signal ? { signal: req.signal } : {});
    return outcome;
  };
}

/** Formats a report as the one line the CLI prints for it. */
export function notifyLine(r: NotifyReport): string {
  switch (r.kind) {
    case "due":
      return `notify: due to ${r.target}: ${r.text}`;
    case "sent":
      return `notify: sent to ${r.target} (attempt ${r.attempt}, ${r.detail})`;
    case "failed":
      return `notify: ${r.target} failed (attempt ${r.attempt}): ${r.error}; ${r.nextRetryAt ? `retry at ${r.nextRetryAt}` : "given up: the cap of attempts is reached"}`;
    case "error":
      return `notify: ${r.message}`;
  }
}
