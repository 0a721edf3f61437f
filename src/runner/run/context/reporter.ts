import type { Envelope } from "../../../core/run/envelope.js";
import type { GateResult } from "../../../gates/gate.js";

/** Progress callbacks of a run; the CLI renders them for a terminal or as plain lines. */
export interface RunReporter {
  runStarted?(info: { runId: string; taskId: string; maxAttempts: number; gates: string[] }): void;
  attemptStarted?(attempt: number, maxAttempts: number): void;
  builderStarted?(attempt: number, description: string): void;
  builderOutput?(chunk: string): void;
  builderFinished?(
    attempt: number,
    info: { exitCode: number | null; timedOut: boolean; durationMs: number },
  ): void;
  /** A problem of the task itself that does not stop the run (a protected glob that matches nothing). */
  warning?(text: string): void;
  findings?(attempt: number, findings: { code: string; severity: string; path?: string | undefined }[]): void;
  gateStarted?(attempt: number, gateId: string): void;
  /** A gate program's output as it runs; shown to the user only (`--verbose`). */
  gateOutput?(gateId: string, chunk: string): void;
  gateFinished?(attempt: number, gateId: string, result: GateResult): void;
  runFinished?(envelope: Envelope): void;
  /** Something the user should know that is not a failure (a folder not mounted, and why). */
  note?(text: string): void;
  agentStep?(info: { turn: number; step: number; tool?: string; tokens: number; costUsd: number }): void;
}
