import type { EventData } from "../core/events/loopgate-event.js";
import type { Feedback } from "../core/run/required-fix.js";
import type { ProcessLimits } from "../core/task/limits.js";
import type { GateIdentity } from "../core/task/task-lock.js";
import type { SandboxMode } from "../sandbox/bubblewrap.js";
import type { TestFloor } from "./tamper/test-report.js";

/** Where and for whom one gate run happens. The gate environment is fresh for this run only. */
export interface GateContext {
  gateEnv: string;
  runId: string;
  attempt: number;
  taskId: string;
  sandbox: SandboxMode;
  /** The task's process, file-size and memory rlimits (default DEFAULT_PROCESS_LIMITS). */
  processLimits?: ProcessLimits;
  /** True when the gate environment holds hard links to pristine files and must be mounted read-only. */
  readOnly: boolean;
  /** Aborted when the user interrupts the run. */
  signal?: AbortSignal;
  /** The task's shared dependency folders, mounted into the gate's sandbox at targets inside gateEnv. */
  dependencies?: readonly { source: string; target: string }[];
  /**
   * The oracle's tree for differential gates (pristine + the task's oracle), built on first use and kept
   * for the run. Never part of the gate environment.
   */
  oracleTree?: () => Promise<OracleTree>;
  /** The fewest real tests this gate must see pass (default 1). */
  testFloor?: TestFloor;
  /**
   * Set for the second run of a gate with a declared `canary`: the canary's files (relative to the
   * gate environment). The result's `passed` then says whether the canary run passed, which it must not.
   */
  declaredCanary?: readonly string[];
  /** How the gate's tests are judged by identity: the task's lock, or recording one (`loopgate task check`). */
  identity?: GateIdentity;
  /** The forgery benchmark's baseline policies model harnesses without tamper checks: exit code only. */
  exitCodeOnly?: boolean;
  /** Receives the gate program's output as it runs (`--verbose`); the user's eyes only, never the builder's. */
  onOutput?: (chunk: string) => void;
}

/** The oracle's tree: its folder, or why it could not be built (an infrastructure failure, never a pass). */
export type OracleTree = { dir: string } | { error: string };

/** One gate's outcome: the event payload, plus whether loopgate itself (not the work) failed. */
export type GateResult = Omit<EventData<"gate_run_finished">, "attempt" | "gate_id"> & {
  /** Set when the gate could not run because of the machine or the task, not the builder's work. */
  infrastructure: string | null;
};

/** A gate from the registry: declared in the task, run fresh on every attempt. */
export interface Gate {
  id: string;
  kind: "subprocess" | "static" | "differential";
  feedback: Feedback;
  /** Absolute path of the held-out overlay, if any. */
  heldout: string | null;
  /** Absolute path of the canary overlay: held-out tests that must fail, proving the framework still reports failures. */
  canary: string | null;
  /** Whether the gate needs a writable environment (a real copy rather than links). */
  writable: boolean;
  run(ctx: GateContext): Promise<GateResult>;
  /**
   * Why the gate cannot run on this machine whatever the builder does (its program is not installed),
   * checked before the builder runs and spends anything; null when nothing is known to be missing.
   */
  preflight?(sandbox: SandboxMode): string | null;
}

/** A not-passed result for a gate that could not decide. */
export function undecided(
  error: NonNullable<GateResult["error"]>,
  summary: string,
  durationMs: number,
  infrastructure: string | null = null,
): GateResult {
  return {
    passed: false,
    exit_code: null,
    timed_out: error === "timeout",
    error,
    duration_ms: durationMs,
    log_excerpt: summary,
    summary,
    infrastructure,
  };
}
