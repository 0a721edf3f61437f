import { resolve } from "node:path";
import { createModel } from "../../agent/models/provider.js";
import { InputError, LoopgateError } from "../../core/kernel/errors.js";

/** The flags that name the planner turns' model. */
export type PlannerFlags = { model?: string; "planner-model"?: string };

/**
 * The model of the planner turns (replan obligations): --planner-model first; then the goal file's
 * planner.model; then the builder's --model; then the goal's builder model. --planner-model is checked
 * now, so a bad spec, a missing script or a missing API key is a bad-input error before any turn runs,
 * not an idle goal later. A scripted/replay file is made absolute (every tick reads it from the start).
 * A host reads it too: a queued goal turn carries the flags `goal submit` was given.
 */
export function plannerFor(flags: PlannerFlags): { model?: string; builderModel?: string } | undefined {
  const spec = flags["planner-model"];
  if (spec === undefined) return flags.model === undefined ? undefined : { builderModel: flags.model };
  const file = /^(scripted|replay):(.+)$/.exec(spec.trim());
  const model = file ? `${file[1]}:${resolve(file[2] as string)}` : spec.trim();
  try {
    createModel(model);
  } catch (e) {
    if (!(e instanceof LoopgateError)) throw e;
    const where = e instanceof InputError ? e.where : undefined;
    const why = where && e.message.startsWith(`${where}: `) ? e.message.slice(where.length + 2) : e.message;
    const path = file ? resolve(file[2] as string) : "";
    throw new InputError(path && !why.includes(path) ? `${why} (${path})` : why, "--planner-model", {
      cause: e,
    });
  }
  return { model };
}
