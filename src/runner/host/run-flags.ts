import type { ModelAdapter } from "../../agent/models/model.js";
import type { SandboxMode } from "../../sandbox/bubblewrap.js";
import type { WritebackPoint } from "../goal/repo/writeback.js";
import type { AfterGoalAppend } from "../goal/turn/goal-journal.js";
import type { BuilderChoice } from "../run/context/builder-choice.js";
import type { ResumeOptions } from "../run/resume-run.js";
import type { LoadedTask } from "../task-source/load-task.js";

/**
 * The run flags of `run`, `verify`, `task check`, `todo run` — and what a queued job carries (its options
 * are the flags `submit` was given), so a host reads them too.
 */
export interface RunFlags {
  builder?: string;
  oracle?: boolean;
  noop?: boolean;
  json?: boolean;
  store?: string;
  workspace?: string;
  "builder-env"?: string[];
  "builder-mount"?: string[];
  network?: boolean;
  "max-attempts"?: number;
  "unsafe-no-sandbox"?: boolean;
  model?: string;
  /** An external agent run through loopgate's adapter: `codex[:MODEL]`. */
  agent?: string;
  record?: string;
  "base-url"?: string;
  "max-turns"?: number;
  "max-cost"?: number;
  case?: string;
  "judge-model"?: string;
  "no-step-checks"?: boolean;
  "step-escalation"?: string;
  strict?: boolean;
  junit?: string;
  markdown?: string;
  /** Stream the builder's and the gates' output live, prefixed (`--follow` is the same). */
  verbose?: boolean;
  follow?: boolean;
}

/** The validated settings of one run on this machine. */
export interface RunSettings {
  /** The local folder runs live under (`<localDir>/runs/<run id>`). */
  localDir: string;
  mounts: string[];
  maxAttempts: number | undefined;
  sandbox: SandboxMode;
}

/** What the run of a resumed run is rebuilt with from its run_started. */
export type RecordedBuilder = ResumeOptions["builder"];

/**
 * How run flags become a run: the builder, the settings, the judge. The CLI owns what a flag means (the
 * store rule, the builder spellings), so a host is given this rather than reading flags itself; the flags
 * a queued job carries go through the same functions as those of `loopgate run`. The builders and the
 * judge may be loaded lazily (the built-in agent only when chosen), so those answer a promise.
 */
export interface RunKit {
  /** Validates the options that reach the runner (mounts, the store outside the work, the sandbox). */
  settings(loaded: LoadedTask, flags: RunFlags): RunSettings;
  /** The builder the flags name (exactly one of them); relative paths in a command resolve in `cwd`. */
  builder(loaded: LoadedTask, flags: RunFlags, cwd: string): Promise<BuilderChoice>;
  /** A goal turn's builder: the one the flags name, else the goal agent's own. */
  goalBuilder(
    loaded: LoadedTask,
    flags: RunFlags,
    agent: { kind: string; model?: string; command?: string },
    sourcePath: string | null,
  ): Promise<BuilderChoice>;
  /** Rebuilds a resumed run's builder from what its run_started recorded (`oracle`: the task's here). */
  recorded(flags: RunFlags, oracle?: string | null): RecordedBuilder;
  /** The judge's model, when the task configures a judge. */
  judge(loaded: LoadedTask, flags: RunFlags): Promise<{ judge?: ModelAdapter }>;
}

/**
 * Kill-point fault injection for the crash tests, as plain values: the CLI reads them from its
 * environment; a host only passes them on to the runs and the ticks.
 */
export interface RunFaults {
  /** Called after each durable append to a run's stream, with the stream's length. */
  afterAppend?: (runEvents: number) => void;
  afterGoalAppend?: AfterGoalAppend;
  atWritebackPoint?: (point: WritebackPoint) => void;
}

/** The run-level faults (a run takes only those). */
export const runFaults = (f: RunFaults): { afterAppend?: (runEvents: number) => void } =>
  f.afterAppend ? { afterAppend: f.afterAppend } : {};

/** The goal-level faults (a tick takes only those). */
export function goalFaults(f: RunFaults): Pick<RunFaults, "afterGoalAppend" | "atWritebackPoint"> {
  return {
    ...(f.afterGoalAppend ? { afterGoalAppend: f.afterGoalAppend } : {}),
    ...(f.atWritebackPoint ? { atWritebackPoint: f.atWritebackPoint } : {}),
  };
}
