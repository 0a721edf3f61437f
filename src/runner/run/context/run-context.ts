import { join } from "node:path";
import type { ModelAdapter } from "../../../agent/models/model.js";
import { type Envelope, projectEnvelope } from "../../../core/run/envelope.js";
import { verdict } from "../../../core/run/run-decider.js";
import type { PinnedIdentity } from "../../../core/task/task-lock.js";
import type { Gate } from "../../../gates/gate.js";
import type { TestFloor } from "../../../gates/tamper/test-report.js";
import type { SandboxMode } from "../../../sandbox/bubblewrap.js";
import type { ContentStore } from "../../../store/kernel/content-store.js";
import { BlobStore } from "../../../workspace/blob-store.js";
import { ObservationStore } from "../../../workspace/observation-store.js";
import { detachOverlay, overlayOf } from "../../../workspace/overlay-workspace.js";
import type { RunJournal } from "../../stream/run-journal.js";
import type { LoadedTask } from "../../task-source/load-task.js";
import { type BuilderChoice, isAgentChoice } from "./builder-choice.js";
import type { SharedDependency } from "./dependencies.js";
import type { GateEnvironmentPolicy } from "./gate-environment-policy.js";
import type { RunReporter } from "./reporter.js";

/** What the driver of one run works with, whether the run is new or resumed. */
export interface RunContext {
  loaded: LoadedTask;
  builder: BuilderChoice;
  journal: RunJournal;
  runDir: string;
  pristineDir: string;
  workspace: string;
  observations: ObservationStore;
  blobs: BlobStore;
  /** The store's ContentStore when it is shared beyond this machine: every observation is kept there too. */
  shared: ContentStore | null;
  gates: Gate[];
  sandbox: SandboxMode;
  allowEnv: readonly string[];
  /** The builder's read-only mounts: the user's and what its command names (see builder-mounts.ts). */
  mounts: readonly string[];
  /** The user's own `--builder-mount` paths among `mounts`. */
  userMounts: readonly string[];
  /** Paths hidden inside the mounts (held-out folders and logs inside an oracle's folder). */
  masked: readonly string[];
  /** The task's shared dependency folders: mounted, never copied (see dependencies.ts). */
  dependencies: readonly SharedDependency[];
  network: boolean;
  /** `loopgate verify`: the work came from this folder; no builder runs. */
  workFrom: string | null;
  reporter: RunReporter;
  /** The run stops when this aborts: the user's interrupt, or `leaseLost`. */
  signal: AbortSignal | undefined;
  /**
   * Aborted (with why) when this process lost the run's lease: another owner drives the run now, so
   * this one stops and records nothing more. Null where no lease is kept (a finished run's reprint).
   */
  leaseLost: AbortSignal | null;
  clock: () => Date;
  /** How gate environments are built: loopgate's pristine policy unless a benchmark passed another in. */
  gateEnvironment: GateEnvironmentPolicy;
  /** The judge's model when the task configures a judge. */
  judge: ModelAdapter | null;
  /** Each subprocess gate's test floor, as run_started recorded it. */
  testFloors: Readonly<Record<string, TestFloor>>;
  /** How subprocess gates are judged by identity (the task's lock, or recording one), as run_started pinned it. */
  identity: PinnedIdentity | null;
}

/** The paths of a run's private folder; an overlay run's pristine tree is its shared snapshot. */
export function runPaths(runDir: string) {
  return {
    pristineDir: overlayOf(runDir)?.lower ?? join(runDir, "pristine"),
    workspace: join(runDir, "workspace"),
    observations: new ObservationStore(join(runDir, "observations")),
    blobs: new BlobStore(join(runDir, "blobs")),
  };
}

/** Records finish_run and returns the envelope projected from the log. */
export async function finishRun(ctx: RunContext): Promise<Envelope> {
  const windDown = isAgentChoice(ctx.builder) ? undefined : ctx.builder.windDown?.bind(ctx.builder);
  if (!ctx.journal.current.finished && windDown) {
    const facts = await windDown(verdict(ctx.journal.current)).catch((e: unknown) => [
      {
        type: "hook_failed" as const,
        data: { attempt: ctx.journal.current.attempts.length, hook_event: "wind_down", reason: String(e) },
      },
    ]);
    for (const event of facts) await ctx.journal.record({ type: "record_agent_runtime", event });
  }
  if (!ctx.journal.current.finished) await ctx.journal.record({ type: "finish_run" });
  // A finished run holds no mount: its changes stay in <run>/upper over the snapshot (a resume mounts it again).
  const overlay = overlayOf(ctx.runDir);
  if (overlay) detachOverlay(overlay);
  const envelope = projectEnvelope(ctx.journal.runId, ctx.journal.events);
  if (!envelope) throw new Error("unreachable: a finished run has an envelope");
  ctx.reporter.runFinished?.(envelope);
  return envelope;
}

/** Records an infrastructure failure (TOOL_FAILURE) and finishes; an interrupt is marked so a resume may reopen it. */
export async function failRun(
  ctx: RunContext,
  reason: string,
  options: { interrupted?: boolean } = {},
): Promise<Envelope> {
  if (!ctx.journal.current.infrastructure)
    await ctx.journal.record({
      type: "fail_infrastructure",
      reason,
      ...(options.interrupted ? { interrupted: true } : {}),
    });
  return finishRun(ctx);
}
