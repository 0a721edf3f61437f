import { constants } from "node:os";
import { isAbsolute, relative } from "node:path";
import { parseDuration } from "../core/duration.js";
import type { SubprocessGateSpec } from "../core/task.js";
import { renderTemplate } from "../core/template.js";
import { runSandboxed, type SandboxMode } from "../sandbox/bubblewrap.js";
import { resolveProgram, SANDBOX_PATH, scrubbedEnv } from "../sandbox/environment.js";
import { type Gate, type GateContext, type GateResult, undecided } from "./gate.js";

const LOG_LIMIT = 8000;

/** Host prefixes that the gate sandbox mounts (see bubblewrapArgv), besides the gate environment. */
const SANDBOX_VISIBLE = ["/usr/", "/etc/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/"];

function isInside(root: string, p: string): boolean {
  const r = relative(root, p);
  return r === "" || (r !== ".." && !r.startsWith("../") && !isAbsolute(r));
}

/** A gate that runs an argv in the gate environment: exit 0 passes, anything else does not. */
export function subprocessGate(
  spec: SubprocessGateSpec,
  heldout: string | null,
  canary: string | null = null,
): Gate {
  const timeoutMs = parseDuration(spec.timeout) ?? 60_000;
  return {
    id: spec.id,
    kind: "subprocess",
    feedback: spec.feedback,
    heldout,
    canary,
    writable: spec.writable,
    preflight(sandbox) {
      const program = spec.run[0] ?? "";
      // A templated program (`${gate_env}/run.sh`) lives in the gate environment, which does not exist yet.
      if (program.includes("${")) return null;
      const fromHost = !program.includes("/") || isAbsolute(program);
      if (!fromHost) return null;
      return hostProgramProblem(spec.id, program, "/nonexistent-gate-env", sandbox)?.infrastructure ?? null;
    },
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
      const missing = hostProgramProblem(spec.id, program, ctx.gateEnv, ctx.sandbox);
      if (missing) return undecided("spawn_failed", missing.summary, 0, missing.infrastructure);
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
          ...(ctx.signal ? { signal: ctx.signal } : {}),
          ...(ctx.onOutput ? { onOutput: ctx.onOutput } : {}),
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
      // bwrap reports a child killed by signal N as exit 128+N (as shells do): a crash, not a verdict.
      const signal = ctx.sandbox === "bubblewrap" ? signalOfExit(r.exitCode) : null;
      if (signal)
        return {
          ...base,
          passed: false,
          timed_out: false,
          error: "crashed",
          summary: `killed by ${signal} (bwrap reported exit ${r.exitCode})`,
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

/**
 * Why a gate's program cannot start, and whose fault that is. Where the program comes from decides:
 * a bare name or an absolute path outside the gate environment is the machine's (`infrastructure`
 * set, a TOOL_FAILURE); a path into the gate environment is the work's (the builder may have deleted it).
 */
function hostProgramProblem(
  gateId: string,
  program: string,
  gateEnv: string,
  sandbox: SandboxMode,
): { summary: string; infrastructure: string | null } | null {
  const fromHost = !program.includes("/") || (isAbsolute(program) && !isInside(gateEnv, program));
  const resolved = resolveProgram(program, gateEnv);
  if (!resolved) {
    const infrastructure = fromHost
      ? `gate ${gateId}: program ${program} is not installed` +
        (program.includes("/") ? "" : ` (searched ${SANDBOX_PATH})`) +
        `; install it, or fix the gate's run: in the task file`
      : null;
    return { summary: `cannot start ${program}: not found or not executable`, infrastructure };
  }
  // The gate sandbox mounts only the system directories and the gate environment: a host program
  // elsewhere would fail inside as a plain "exit 1", blamed on the work.
  if (sandbox === "bubblewrap" && fromHost && !SANDBOX_VISIBLE.some((d) => resolved.startsWith(d))) {
    const why = `cannot start ${resolved}: the gate sandbox mounts only /usr, /etc, /bin, /sbin, /lib* and the gate environment`;
    return {
      summary: why,
      infrastructure: `gate ${gateId}: ${why}; install the program under /usr or ship it in the gate's heldout overlay`,
    };
  }
  return null;
}

/** The signal behind an exit status of 128+N, or null when the status is an ordinary exit. */
function signalOfExit(code: number): string | null {
  if (code <= 128) return null;
  return Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0] ?? null;
}
