import type { TurnWork } from "../events/goal/turn-events.js";
import { leaseLive } from "../kernel/lease.js";
import type { GoalHistory } from "./history.js";
import type { TurnLease } from "./turn/turn-lease.js";

/**
 * A turn in flight, as `goal status` shows it: `running` while the turn lease is live and its process is
 * not known to be gone; `stalled` when the lease expired or its process is gone (the next tick takes it
 * over and resumes the turn by readback); `unsettled` when a turn was left open with no lease held.
 * `turn` is null while the lease holder has bound no turn yet (it is selecting one). A projection of the
 * lease and the turn's facts: no todo's stored status says "running", ever.
 */
export interface TurnInFlight {
  state: "running" | "stalled" | "unsettled";
  why: string;
  holder: string | null;
  pid: number | null;
  host: string | null;
  /** When the lease was taken (or, with no lease, when the open turn was bound). */
  since: string | null;
  /** When the lease runs out unless its holder renews it. */
  until: string | null;
  turn: {
    number: number;
    turnId: string;
    work: TurnWork;
    /** The last phase it recorded, and when. */
    phase: string;
    phaseAt: string;
  } | null;
}

/** The turn in flight now, from the goal's turn lease and its open turn; null when nothing is in flight. */
export function turnInFlight(
  h: Pick<GoalHistory, "open" | "leaseTakenAt">,
  lease: TurnLease | null,
  now: Date,
  /** The lease owner's process seen gone on this host (null: it cannot be told from here). */
  processGone: boolean | null,
): TurnInFlight | null {
  const t = h.open;
  const last = t?.phases.at(-1);
  const turn = t
    ? {
        number: t.number,
        turnId: t.turnId,
        work: t.work,
        phase: last?.phase ?? "bind",
        phaseAt: last?.at ?? t.startedAt,
      }
    : null;
  if (lease) {
    const live = leaseLive(lease, now);
    const state = !live || processGone === true ? "stalled" : "running";
    const why = !live
      ? `its lease ran out at ${lease.expiresAt}; the next tick takes it over${turn ? " and resumes the turn by readback" : ""}`
      : processGone === true
        ? `process ${lease.owner.pid} on ${lease.owner.host} is gone; the next tick here takes the lease over${turn ? " and resumes the turn by readback" : ""}`
        : turn
          ? `${lease.holder} is settling it (lease until ${lease.expiresAt})`
          : `${lease.holder} holds the turn lease and is choosing the work (lease until ${lease.expiresAt})`;
    return {
      state,
      why,
      holder: lease.holder,
      pid: lease.owner.pid,
      host: lease.owner.host,
      since: h.leaseTakenAt,
      until: lease.expiresAt,
      turn,
    };
  }
  if (!t || !turn) return null;
  return {
    state: "unsettled",
    why: "no process holds the turn lease; the next tick resumes the turn by readback",
    holder: null,
    pid: null,
    host: null,
    since: t.startedAt,
    until: null,
    turn,
  };
}
