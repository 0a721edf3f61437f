/**
 * The life of a worker, as named states. `running`: it claims jobs; `draining`: it claims nothing more and
 * finishes (or, on a second stop request, hands back) what it holds; `stopped`: it ended cleanly; `failed`:
 * it lost the database, or could not start jobs on this machine. The two end states are final.
 */
export type WorkerState = "running" | "draining" | "stopped" | "failed";

/** The states each state may move to; nothing else is a transition. */
export const WORKER_TRANSITIONS: Readonly<Record<WorkerState, readonly WorkerState[]>> = {
  // Stopped straight from running: --once or --until-idle with nothing held; failed: the database is gone.
  running: ["draining", "stopped", "failed"],
  draining: ["stopped", "failed"],
  stopped: [],
  failed: [],
};

/** A transition the worker's life does not have (a bug in the host, never a user's input). */
export class IllegalWorkerTransition extends Error {
  constructor(
    readonly from: WorkerState,
    readonly to: WorkerState,
  ) {
    super(`a worker cannot go from ${from} to ${to}`);
    this.name = "IllegalWorkerTransition";
  }
}

/** The state after moving `from` → `to`; throws IllegalWorkerTransition when that is no transition. */
export function transition(from: WorkerState, to: WorkerState): WorkerState {
  if (!WORKER_TRANSITIONS[from].includes(to)) throw new IllegalWorkerTransition(from, to);
  return to;
}
