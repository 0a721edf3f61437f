import { resolve } from "node:path";
import type { ModelAdapter } from "../../agent/models/model.js";
import { InputError } from "../../core/kernel/errors.js";
import type { RunFlags } from "../../runner/host/run-flags.js";
import type { LoadedTask } from "../../runner/task-source/load-task.js";

/**
 * The judge's model: --judge-model, else the task's judge.model (a scripted/replay file there is
 * relative to the task file). Only when the task configures a judge.
 */
export async function judgeModelFor(loaded: LoadedTask, flags: RunFlags): Promise<{ judge?: ModelAdapter }> {
  if (!loaded.task.judge) {
    if (flags["judge-model"] !== undefined)
      throw new InputError("the task configures no judge", "--judge-model");
    return {};
  }
  const fromTask = loaded.task.judge.model;
  // The model providers (the AI SDK) are loaded only for a task with a judge.
  const { normalizeModelSpec } = await import("../../agent/agent-builder.js");
  const spec =
    flags["judge-model"] !== undefined
      ? normalizeModelSpec(flags["judge-model"])
      : fromTask?.replace(
          /^(scripted|replay):(?!\/)(.+)$/,
          (_m, kind: string, p: string) => `${kind}:${resolve(loaded.dir, p)}`,
        );
  if (!spec) return {};
  const { createModel } = await import("../../agent/models/provider.js");
  return { judge: createModel(spec) };
}
