import { parseDuration } from "../core/duration.js";
import type { SubprocessGateSpec } from "../core/task.js";
import { renderTemplate } from "../core/template.js";
import { runSandboxed } from "../sandbox/bubblewrap.js";
import { resolveProgram, scrubbedEnv } from "../sandbox/environment.js";
import { type Gate, type GateContext, type GateResult, undecided } from "./gate.js";

const LOG_LIMIT = 8000;

/** A gate that runs an argv in the gate environment: exit 0 passes, anything else does not. */
export function subprocessGate(spec: SubprocessGateSpec, heldout: string | null): Gate {
  const timeoutMs = parseDuration(spec.timeout) ?? 60_000;
  return {
    id: spec.id,
    kind: "subprocess",
    feedback: spec.feedback,
    heldout,
    writable: spec.writable,
    async run(ctx: GateContext): Promise<GateResult> {
      const params = {
        gate_env: ctx.gateEnv,
        workspace: ctx.gateEnv,
        run_id: ctx.runId,
        attempt: String(ctx.attempt),
        gate_id: spec.id,
        task_id: ctx.taskId,
      };
      const argv = spec.run.map((a) => renderTemplate(a, params));
      const program = argv[0] ?? "";
      if (!resolveProgram(program, ctx.gateEnv)) {
        // A bare name missing from the system is the machine's problem; a path missing from the
        // gate environment is the work's (the builder may have deleted it).
        const infra = program.includes("/")
          ? null
          : `gate ${spec.id}: program ${program} is not installed (searched /usr/local/bin:/usr/bin:/bin)`;
        return undecided("spawn_failed", `cannot start ${program}: not found or not executable`, 0, infra);
      }
      const env = scrubbedEnv({
        home: "/tmp",
        extra: { PYTHONDONTWRITEBYTECODE: "1", LOOPGATE_RUN_ID: ctx.runId, ...spec.env },
      });
      const r = await runSandboxed(
        {
          argv,
          cwd: ctx.gateEnv,
          writable: ctx.readOnly ? [] : [ctx.gateEnv],
          readonly: ctx.readOnly ? [ctx.gateEnv] : [],
          env,
          network: false,
          timeoutMs,
          maxOutputBytes: LOG_LIMIT,
        },
        ctx.sandbox,
      );
      const base = {
        exit_code: r.exitCode,
        duration_ms: r.durationMs,
        log_excerpt: r.output,
        infrastructure: null,
      };
      if (r.spawnError)
        return { ...undecided("spawn_failed", r.spawnError, r.durationMs), log_excerpt: r.output };
      if (r.timedOut)
        return {
          ...base,
          passed: false,
          timed_out: true,
          error: "timeout",
          summary: `timed out after ${timeoutMs} ms`,
        };
      if (r.exitCode === null)
        return {
          ...base,
          passed: false,
          timed_out: false,
          error: "crashed",
          summary: `killed by ${r.signal}`,
        };
      const passed = r.exitCode === 0;
      return {
        ...base,
        passed,
        timed_out: false,
        error: null,
        summary: passed ? "passed" : `exit ${r.exitCode}`,
      };
    },
  };
}
