import type { AgentRuntimeEventBody } from "../core/events/loopgate-event.js";
import type { ProcessLimits } from "../core/task/limits.js";
import type { SandboxMode } from "../sandbox/bubblewrap.js";

/** Everything one builder pass gets. The builder sees the run workspace and nothing of the task's held-out side. */
export interface BuilderContext {
  runId: string;
  attempt: number;
  /** The run's private folder (outside the workspace), for a builder that needs files loopgate owns. */
  runDir?: string;
  /** Absolute path of the run's own workspace: the only writable place. */
  workspace: string;
  prompt: string;
  /** Absolute path of a read-only file holding the prompt (and the required fix, when there is one). */
  promptFile: string;
  /** The templated fix from the previous failed attempt; null on the first attempt. */
  requiredFix: string | null;
  sandbox: SandboxMode;
  /** Names of the caller's environment variables that may pass through (e.g. ANTHROPIC_API_KEY). */
  allowEnv: readonly string[];
  /** Extra read-only mounts: the user's (`--builder-mount`) and the files the builder command names. */
  mounts: readonly string[];
  /** Paths hidden inside those mounts (held-out folders and the event log beside an oracle). */
  masked?: readonly string[];
  /** The task's shared dependency folders, mounted at targets inside the workspace (SandboxSpec.dependencies). */
  dependencies?: readonly { source: string; target: string }[];
  network: boolean;
  timeoutMs: number;
  /** The task's process, file-size and memory rlimits (default DEFAULT_PROCESS_LIMITS). */
  limits?: ProcessLimits;
  onOutput?: (chunk: string) => void;
  /** Told what loopgate changed about this pass (a long `{prompt}` passed as the prompt file's path). */
  onNote?: (text: string) => void;
  /** Aborted when the user interrupts the run. */
  signal?: AbortSignal;
  /** Records what an external agent's runtime reported through loopgate's hooks (see claude/). */
  onRuntimeFact?: (fact: AgentRuntimeEventBody) => Promise<void>;
  /** Records a finding on this attempt (e.g. the agent tried to write its hook settings). */
  onFinding?: (finding: {
    code: string;
    severity: "blocking" | "warning";
    detail: string;
    path?: string;
  }) => Promise<void>;
}

/** What one builder pass did. `infrastructure` is set when the builder could not run at all. */
export interface BuilderResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  output: string;
  infrastructure: string | null;
  /** What the agent said at the end, when the builder can tell it from its output (an adapter): the claim. */
  claim?: string;
}

/**
 * Anything that changes the run workspace in one pass as a command: an external agent, the oracle, or
 * nothing. (loopgate's built-in agent is not a command: runner/run/context/builder-choice.ts chooses between the two.)
 */
export interface Builder {
  descriptor: {
    kind: "command" | "oracle" | "noop" | "workspace" | "claude-code";
    command?: string;
  };
  run(ctx: BuilderContext): Promise<BuilderResult>;
  /**
   * What the builder must see read-only to start at all (the script its command names, and the
   * script's folder); the runner grants it only under the same rules as `--builder-mount`.
   */
  needs?: BuilderNeeds;
  /** Why the builder cannot start, checked before any attempt runs (its program is not found); null when it can. */
  preflight?(workspace: string): string | null;
  /**
   * Why a pass that changed nothing in the workspace means the builder never started (exit 126/127,
   * or its interpreter could not open the script), with the fix; null when it started.
   */
  cannotStart?(result: BuilderResult): string | null;
  /**
   * A builder that keeps running between attempts (Claude Code waiting on its Stop hook) is told the
   * verdict before it is recorded, so it can end its session; what its runtime then reports is recorded first.
   */
  windDown?(verdict: { status: string; reason: string }): Promise<AgentRuntimeEventBody[]>;
  /** Stops whatever such a builder still runs (its agent process, its hook server); safe to call twice. */
  dispose?(): Promise<void>;
}

/** Read-only paths a builder asks for. `trusted` (the oracle, the task author's own) may see the task folder. */
export interface BuilderNeeds {
  files: readonly string[];
  folders: readonly string[];
  trusted?: boolean;
}
