import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { effectRef, spendKey, type TurnIdentity } from "../../../core/goal/turn/index.js";
import { goalFolder } from "../goal-workspace.js";
import { type TickCtx, turnDecision } from "./tick-context.js";

/**
 * The durable result of a monitor poll or a planner turn's host_execute: one JSON file per turn in the
 * goal's folder, written atomically (temp + rename) before `turn_host_executed` names it. Readback of the
 * host effect = this file exists (committed → reuse, absent → execute again: a poll is read-only; a
 * planner answer not yet kept is asked again).
 */
const name = (id: TurnIdentity) => {
  const h = createHash("sha256").update(spendKey(id)).digest("hex").slice(0, 16);
  return `${id.turn_instance_id.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 40)}-${h}.json`;
};
const dir = (storeDir: string, id: TurnIdentity) => join(goalFolder(storeDir, id.goal_id), "turn-effects");

/** The run_ref a host effect kept here is recorded under. */
export const effectRunRef = (id: TurnIdentity) => `effect:${name(id)}`;

export function saveTurnEffect(storeDir: string, id: TurnIdentity, data: unknown): string {
  const d = dir(storeDir, id);
  mkdirSync(d, { recursive: true });
  const path = join(d, name(id));
  writeFileSync(`${path}.tmp`, JSON.stringify(data));
  renameSync(`${path}.tmp`, path);
  return effectRunRef(id);
}

export function loadTurnEffect<T>(storeDir: string, id: TurnIdentity): T | null {
  const path = join(dir(storeDir, id), name(id));
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

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
  const kept = loadTurnEffect<unknown>(ctx.deps.storeDir, id) !== null;
  ctx.progress({ phase: "readback", detail: `${what}: ${kept ? "kept" : "absent"}` });
  if (!kept && onAbsent) return onAbsent();
  await ctx.j.append(
    turnDecision({
      kind: "resolve_readback",
      identity: id,
      phase: "host_execute",
      effect_ref: effectRef(id, "host_execute"),
      readback: kept
        ? { found: "committed", payload: { phase: "host_execute", run_ref: effectRunRef(id) } }
        : { found: "absent" },
    }),
  );
}
