import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { InfrastructureError, InputError } from "../core/kernel/errors.js";
import {
  freshLayers,
  isOverlayMounted,
  mountOverlay,
  type OverlayDirs,
  overlayUnavailable,
  probeOverlay,
  unmountOverlay,
  unsafeStorePath,
} from "./overlay-mount.js";
import { removeTree } from "./remove-tree.js";

/** How a run's workspace is made: a private copy, or an overlay on the shared pristine snapshot. */
export type WorkspaceMode = "copy" | "overlay";

/** The mode runs use here, and why (for `loopgate doctor` and the run's note). */
export interface WorkspaceChoice {
  mode: WorkspaceMode;
  why: string;
  /**
   * Chosen, not forced: when the overlay cannot be mounted after all (a store on a filesystem overlayfs
   * refuses as an upper layer), the run copies instead and says why.
   */
  fallback?: true;
}

/** The variable that forces a mode (`copy` or `overlay`); unset, the mode is chosen automatically. */
export const WORKSPACE_MODE_VARIABLE = "LOOPGATE_WORKSPACE";

const probed = new Map<string, string | null>();

/**
 * The workspace mode of runs whose folders live under `runsDir`. `LOOPGATE_WORKSPACE=copy|overlay`
 * forces one (a forced overlay that cannot be mounted is an error, never a silent copy). Unset, runs
 * use an overlay wherever one can be mounted (root, kernel overlayfs, a store path mount options can
 * carry) and copy elsewhere. A run does not mount a trial overlay first: it mounts its own, and falls
 * back to a copy when that fails (`fallback`); `probe` (doctor) mounts a trial one to say for sure.
 */
export function chooseWorkspaceMode(
  runsDir: string,
  env: NodeJS.ProcessEnv = process.env,
  probe = false,
): WorkspaceChoice {
  const forced = env[WORKSPACE_MODE_VARIABLE];
  const unavailable = () => {
    if (!probed.has(runsDir)) probed.set(runsDir, probeOverlay(runsDir));
    return probed.get(runsDir) ?? null;
  };
  if (forced === "copy") return { mode: "copy", why: `${WORKSPACE_MODE_VARIABLE}=copy` };
  if (forced === "overlay") {
    const why = unavailable();
    if (why) throw new InfrastructureError(`${WORKSPACE_MODE_VARIABLE}=overlay, but ${why}`);
    return { mode: "overlay", why: `${WORKSPACE_MODE_VARIABLE}=overlay` };
  }
  if (forced !== undefined && forced !== "")
    throw new InputError(
      `${WORKSPACE_MODE_VARIABLE}=${JSON.stringify(forced.slice(0, 40))}: expected copy or overlay (or unset)`,
      WORKSPACE_MODE_VARIABLE,
    );
  const why = probe
    ? unavailable()
    : (overlayUnavailable() ?? unsafeStorePath(runsDir) ?? refusedHere(runsDir));
  if (why) return { mode: "copy", why: `overlays are not available: ${why}` };
  const refused = probe ? refusedHere(runsDir) : null;
  if (refused)
    return {
      mode: "copy",
      why: `${refused}; a trial overlay mounts now: remove ${join(runsDir, REFUSED)} to let runs use overlays again`,
    };
  return {
    mode: "overlay",
    why: probe ? "overlays can be mounted here" : "overlays are available here",
    fallback: true,
  };
}

/** Where a store notes that an overlay could not be mounted under its runs folder, and why. */
const REFUSED = ".overlay-refused";
const Refused = z.object({ dev: z.number(), why: z.string() });

/**
 * Notes, once a run's own overlay could not be mounted under `runsDir`, why: later runs there copy at
 * once (no snapshot made and no mount tried for nothing, no note at every run) while the folder stays on
 * the same filesystem. `loopgate doctor` still mounts a trial overlay and says what it finds.
 */
export function noteOverlayRefused(runsDir: string, why: string): void {
  try {
    const dev = statSync(runsDir).dev;
    writeFileSync(join(runsDir, REFUSED), JSON.stringify({ dev, why }), { mode: 0o600 });
  } catch {
    // Unnoted: the next run tries again.
  }
}

/** Why an overlay was refused under `runsDir` on its present filesystem, or null (never noted, or since moved). */
function refusedHere(runsDir: string): string | null {
  try {
    const noted = Refused.parse(JSON.parse(readFileSync(join(runsDir, REFUSED), "utf8")));
    if (noted.dev !== statSync(runsDir).dev) return null;
    return `an overlay could not be mounted here before (${noted.why}; noted in ${join(runsDir, REFUSED)})`;
  } catch {
    return null;
  }
}

/** An overlay run's folders: the shared lower layer, and its own upper layer, scratch and mount point. */
export interface OverlayWorkspace extends OverlayDirs {
  /** The id of the lower layer's observation: the run's pristine observation. */
  pristineId: string;
}

const Marker = z.object({ lower: z.string().min(1), pristine_id: z.string().regex(/^[0-9a-f]{64}$/) });
const MARKER = "overlay.json";

/** The overlay of the run in `runDir`, or null when its workspace is a copy. */
export function overlayOf(runDir: string): OverlayWorkspace | null {
  const file = join(runDir, MARKER);
  if (!existsSync(file)) return null;
  let m: z.infer<typeof Marker>;
  try {
    m = Marker.parse(JSON.parse(readFileSync(file, "utf8")));
  } catch (e) {
    throw new InfrastructureError(`the run's overlay record ${file} is unreadable: ${(e as Error).message}`);
  }
  return {
    lower: m.lower,
    upper: join(runDir, "upper"),
    work: join(runDir, "overlay-work"),
    merged: join(runDir, "workspace"),
    pristineId: m.pristine_id,
  };
}

/** Makes the run's overlay on `lower` and mounts it at `<runDir>/workspace`; the folder must be new. */
export function createOverlay(runDir: string, lower: string, pristineId: string): OverlayWorkspace {
  writeFileSync(join(runDir, MARKER), JSON.stringify({ lower, pristine_id: pristineId }), { mode: 0o600 });
  const o = overlayOf(runDir) as OverlayWorkspace;
  freshLayers(o);
  mkdirSync(o.merged, { recursive: true });
  mountOverlay(o);
  return o;
}

/** Mounts the run's overlay again when it is not (after a reboot, or once a finished run was unmounted). */
export function attachOverlay(o: OverlayWorkspace): void {
  if (!existsSync(o.lower))
    throw new InfrastructureError(
      `the run's pristine snapshot ${o.lower} is gone: its overlay cannot be mounted`,
    );
  if (isOverlayMounted(o.merged)) return;
  mkdirSync(o.merged, { recursive: true });
  mountOverlay(o);
}

/** Unmounts the run's overlay; its upper layer (what the builder changed) stays in the run folder. */
export function detachOverlay(o: OverlayWorkspace): void {
  unmountOverlay(o.merged);
}

/**
 * Rolls the workspace back to pristine by discarding the upper layer: the cost is what the builder
 * changed (removing it), never the tree.
 */
export async function discardUpper(o: OverlayWorkspace): Promise<void> {
  unmountOverlay(o.merged);
  await removeTree(o.upper);
  await removeTree(o.work);
  freshLayers(o);
  mountOverlay(o);
}
