import { createHash } from "node:crypto";
import { effectRef, type TurnIdentity } from "../../../core/events/goal/turn-events.js";
import { effectRunRef } from "../repo/effect-files.js";
import { repoOf, type TickCtx, turnDecision } from "./tick-context.js";

export { effectRunRef } from "../repo/effect-files.js";

export const digestOf = (x: unknown) =>
  `sha256:${createHash("sha256").update(JSON.stringify(x)).digest("hex")}`;

/**
 * The readback of a prepared host_execute whose effect is kept here (a poll's observation, a planner's
 * answer, an acceptance turn's run list): kept → `committed` (the turn reuses it), none → `absent` (the
 * next step executes it again). With `onAbsent`, nothing is recorded for a missing file and `onAbsent`
 * runs instead (acceptance finds its runs again by their ids: reused, resumed or run).
 */
export async function readbackKeptEffect(
  ctx: TickCtx,
  id: TurnIdentity,
  what: string,
  onAbsent?: () => Promise<void>,
): Promise<void> {
  const kept = (await repoOf(ctx).loadEffect<unknown>(id)) !== null;
  ctx.progress({ phase: "readback", detail: `${what}: ${kept ? "kept" : "absent"}` });
  if (!kept && onAbsent) return onAbsent();
  await ctx.j.append(
    turnDecision({
      type: "resolve_readback",
      identity: id,
      phase: "host_execute",
      effectRef: effectRef(id, "host_execute"),
      readback: kept
        ? { found: "committed", payload: { phase: "host_execute", runRef: effectRunRef(id) } }
        : { found: "absent" },
    }),
  );
}
