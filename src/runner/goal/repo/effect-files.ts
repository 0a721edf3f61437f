import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spendKey, type TurnIdentity } from "../../../core/events/goal/turn-events.js";
import { goalFolder } from "./goal-workspace.js";

/**
 * The durable result of a monitor poll or a planner turn's host_execute: one JSON file per turn in the
 * goal's folder, written atomically (temp + rename) before `turn_host_executed` names it. Readback of the
 * host effect = this file exists (committed → reuse, absent → execute again: a poll is read-only; a
 * planner answer not yet kept is asked again).
 */
export const turnEffectName = (id: TurnIdentity) => {
  const h = createHash("sha256").update(spendKey(id)).digest("hex").slice(0, 16);
  return `${id.turn_instance_id.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 40)}-${h}.json`;
};
const dir = (localDir: string, id: TurnIdentity) => join(goalFolder(localDir, id.goal_id), "turn-effects");

/** The run_ref a host effect kept here is recorded under. */
export const effectRunRef = (id: TurnIdentity) => `effect:${turnEffectName(id)}`;

export function saveTurnEffect(localDir: string, id: TurnIdentity, data: unknown): string {
  const d = dir(localDir, id);
  mkdirSync(d, { recursive: true });
  const path = join(d, turnEffectName(id));
  writeFileSync(`${path}.tmp`, JSON.stringify(data));
  renameSync(`${path}.tmp`, path);
  return effectRunRef(id);
}

export function loadTurnEffect<T>(localDir: string, id: TurnIdentity): T | null {
  const path = join(dir(localDir, id), turnEffectName(id));
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, "utf8")) as T;
}
