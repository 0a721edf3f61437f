import type { TurnFailureCode, TurnIdentity, TurnWork } from "../../../core/events/goal/turn-events.js";
import type { WakeUp } from "../../../core/goal/schedule/scheduler.js";
/** What one `goal tick` did, and when to look again. */
export type TickOutcome =
  | { kind: "advanced"; turn: TurnIdentity; work: TurnWork; result: string; changed: boolean; wake: WakeUp }
  | { kind: "idle"; reason: string; wake: WakeUp } // nothing eligible now (monitor not due, backoff)
  | { kind: "waiting_person"; who: string; gateId: string; wake: WakeUp }
  | { kind: "throttled"; reason: string; wake: WakeUp }
  | { kind: "terminal"; closure: string; wake: WakeUp }
  | { kind: "stopped"; reason: string; wake: WakeUp } // paused by a person, or blocked_health
  | { kind: "busy"; holder: string; expiresAt: string; wake: WakeUp } // another turn holds the goal's lease
  | {
      kind: "failed";
      turn: TurnIdentity | null;
      code: TurnFailureCode | "run_failed";
      detail: string;
      wake: WakeUp;
    };

/** A tick outcome as `goal tick --json` and `goal run --json` print it: its snake_case keys, in order. */
export type TickOutcomeWire =
  | Exclude<TickOutcome, { kind: "waiting_person" | "busy" }>
  | { kind: "waiting_person"; who: string; gate_id: string; wake: WakeUp }
  | { kind: "busy"; holder: string; expires_at: string; wake: WakeUp };

/** The printed shape of a tick outcome. */
export function encodeTickOutcome(o: TickOutcome): TickOutcomeWire {
  switch (o.kind) {
    case "waiting_person":
      return { kind: o.kind, who: o.who, gate_id: o.gateId, wake: o.wake };
    case "busy":
      return { kind: o.kind, holder: o.holder, expires_at: o.expiresAt, wake: o.wake };
    default:
      return o;
  }
}

export interface TickProgress {
  turn: number;
  todo: string | null;
  phase: string;
  detail: string;
}
export interface TickRequest {
  goalId: string;
  agentId: string;
  onProgress?: (p: TickProgress) => void;
  signal?: AbortSignal;
}
/** One governed turn; the CLI and the scheduler build it with the store, store dir and run host bound. */
export type Tick = (req: TickRequest) => Promise<TickOutcome>;
