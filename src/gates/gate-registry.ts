import { resolve } from "node:path";
import { isDifferentialGate, isSubprocessGate, type Task } from "../core/task/task.js";
import { differentialGate } from "./differential-gate.js";
import type { Gate } from "./gate.js";
import { staticGate } from "./static-gate.js";
import { subprocessGate } from "./subprocess-gate.js";

/** Builds the task's gates, in declaration order; held-out paths are resolved against the task's folder. */
export function buildGateRegistry(task: Task, taskDir: string): Gate[] {
  return task.gates.map((spec) => {
    if (isDifferentialGate(spec)) return differentialGate(spec, taskDir);
    return isSubprocessGate(spec)
      ? subprocessGate(
          spec,
          spec.heldout ? resolve(taskDir, spec.heldout) : null,
          spec.canary ? resolve(taskDir, spec.canary) : null,
        )
      : staticGate(spec);
  });
}
