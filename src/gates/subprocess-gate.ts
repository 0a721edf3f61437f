import { constants } from "node:os";
import { isAbsolute, relative, resolve } from "node:path";
import { boundText, LIMITS } from "../core/kernel/bounded.js";
import { parseDuration } from "../core/kernel/duration.js";
import { renderTemplate } from "../core/kernel/template.js";
import { type GateTamper, MAX_CANARY_NAMES, MAX_RECORDED_TESTS } from "../core/task/gate-tamper.js";
import type { SubprocessGateSpec } from "../core/task/task.js";
import { runSandboxed, type SandboxMode } from "../sandbox/bubblewrap.js";
import { resolveProgram, SANDBOX_PATH, scrubbedEnv } from "../sandbox/environment.js";
import { BoundedOutput } from "../sandbox/process.js";
import { type Gate, type GateContext, type GateResult, undecided } from "./gate.js";
import type { IdentityVerdict } from "./tamper/identity-verdict.js";
import {
  declaredCanaryFailed,
  prepareTamperCheck,
  type TamperCheck,
  verdictOf,
} from "./tamper/instrument.js";
import { readOnlyHint } from "./tamper/js-frameworks.js";
import { canaryProblem, type TestVerdict } from "./tamper/test-report.js";

type Verdict = TestVerdict & Partial<Pick<IdentityVerdict, "identity" | "twins" | "observed">>;

/** A recording run's observations for the lock: identities that passed, and what each failed twin changed. */
function observedRecord(o: NonNullable<IdentityVerdict["observed"]>, t: TamperCheck): GateTamper["observed"] {
  const twinsFailed = o.twinsFailed.flatMap((key) => {
    const e = t.twins?.emitted.get(key);
    return e?.twin ? [{ test: e.original, site: e.twin.site, replacement: e.twin.replacement }] : [];
  });
  return {
    passed: o.passed.slice(0, MAX_RECORDED_TESTS),
    twins_failed: twinsFailed.slice(0, MAX_RECORDED_TESTS),
    untwinned: (t.twins?.untwinned ?? []).slice(0, 200).map((u) => boundText(u, LIMITS.note)),
  };
}

const LOG_LIMIT = 8000;
/** How much of a run's output is kept for reading a runner's own summary (not recorded). */
const PARSE_LIMIT = 8 * 1024 * 1024;

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
      return (
        hostProgramProblem(spec.id, program, "/nonexistent-gate-env", sandbox, [])?.infrastructure ?? null
      );
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
      const missing = hostProgramProblem(spec.id, program, ctx.gateEnv, ctx.sandbox, ctx.dependencies ?? []);
      if (missing) return undecided("spawn_failed", missing.summary, 0, missing.infrastructure);
      // Caches point at the sandbox's private /tmp (a fresh tmpfs per gate run), never into the tree:
      // PYTHONPYCACHEPREFIX makes CPython read and write bytecode only there, so no `__pycache__` in the
      // tree is trusted (PYTHONDONTWRITEBYTECODE stops writing, not reading); GOCACHE holds Go's build
      // and test-result cache there even when a task's env moves HOME. CARGO_TARGET_DIR stays unset:
      // gates may run `./target/debug/x`, a builder's target/ is never carried, and carried sources have
      // fresh mtimes, so cargo rebuilds them. Without a sandbox /tmp is the host's: nothing is private.
      const env = scrubbedEnv({
        home: "/tmp",
        extra: {
          PYTHONDONTWRITEBYTECODE: "1",
          PYTHONPYCACHEPREFIX: "/tmp/loopgate-cache/pycache",
          GOCACHE: "/tmp/loopgate-cache/go-build",
          LOOPGATE_RUN_ID: ctx.runId,
          ...spec.env,
        },
      });
      let tamper: TamperCheck;
      try {
        tamper = await prepareTamperCheck(spec, argv, ctx.gateEnv, {
          offBecause: ctx.exitCodeOnly ? "a baseline policy of the forgery benchmark: exit code only" : null,
          heldout,
          identity: ctx.identity ?? null,
        });
      } catch (e) {
        return undecided(
          "spawn_failed",
          `cannot prepare loopgate's tamper check: ${(e as Error).message}`,
          0,
          `gate ${spec.id}: cannot prepare loopgate's tamper check in ${ctx.gateEnv}: ${(e as Error).message}`,
        );
      }
      const full = new BoundedOutput(PARSE_LIMIT);
      try {
        const r = await runSandboxed(
          {
            argv: tamper.argv,
            cwd: ctx.gateEnv,
            writable: ctx.readOnly ? [] : [ctx.gateEnv],
            // Preloads, reporters and the report pipe: executed and trusted, so never writable inside.
            readonly: [
              ...(ctx.readOnly ? [ctx.gateEnv] : []),
              ...(tamper.privateDir ? [tamper.privateDir] : []),
            ],
            env: { ...env, ...tamper.env },
            ...(ctx.dependencies?.length ? { dependencies: ctx.dependencies } : {}),
            network: false,
            timeoutMs,
            ...(ctx.processLimits ? { limits: ctx.processLimits } : {}),
            maxOutputBytes: LOG_LIMIT,
            onOutput: (chunk) => {
              full.push(chunk);
              ctx.onOutput?.(chunk);
            },
            ...(ctx.signal ? { signal: ctx.signal } : {}),
          },
          ctx.sandbox,
        );
        const reportText = tamper.pipe ? await tamper.pipe.finish() : null;
        return judge(r, tamper, full.toString(), reportText);
      } finally {
        tamper.cleanup();
      }

      function judge(
        r: Awaited<ReturnType<typeof runSandboxed>>,
        t: TamperCheck,
        output: string,
        reportText: string | null,
      ): GateResult {
        const floor = ctx.testFloor ?? {
          min: spec.min_tests ?? 1,
          source: spec.min_tests ? "declared" : "default",
        };
        // `canaryFailed`: whether loopgate's own canary failed as it must, known once the run exited normally.
        const record = (v: Verdict | null, canaryFailed?: boolean): GateTamper => ({
          check: t.check,
          runner: t.adapter?.id ?? null,
          channel: t.plan ? (t.adapter?.channel ?? null) : null,
          canary: canaryRecord(t, canaryFailed),
          tests: v ? v.counts : null,
          floor,
          note: t.note ? boundText(t.note, LIMITS.note) : null,
          ...(t.rule
            ? {
                identity: {
                  source: t.rule.mode === "enforce" ? ("lock" as const) : ("recording" as const),
                  required: v?.identity?.required ?? 0,
                  passed: v?.identity?.passed ?? 0,
                  not_passed: v?.identity?.notPassed ?? [],
                },
                twins: v?.twins ?? (t.twins ? { planted: t.twins.twins.length, failed: 0 } : null),
              }
            : {}),
          ...(v?.observed ? { observed: observedRecord(v.observed, t) } : {}),
        });
        const base = {
          exit_code: r.exitCode,
          duration_ms: r.durationMs,
          log_excerpt: r.output,
          infrastructure: null,
          tamper: record(null),
        };
        if (r.spawnError)
          return {
            ...undecided("spawn_failed", r.spawnError, r.durationMs),
            log_excerpt: r.output,
            tamper: base.tamper,
          };
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
        if (ctx.declaredCanary) return judgeDeclaredCanary(r.exitCode, t, output, reportText, base);
        const v = verdictOf(t, output, r.exitCode, floor, reportText);
        if (v)
          return {
            ...base,
            tamper: record(v, plantedCanaryFailed(t, output, reportText, r.exitCode)),
            passed: v.passed,
            timed_out: false,
            error: v.error,
            summary: v.passed ? v.summary : withHint(v.summary, output),
          };
        const passed = r.exitCode === 0;
        return {
          ...base,
          passed,
          timed_out: false,
          error: null,
          summary: passed ? "passed" : withHint(`exit ${r.exitCode}`, output),
        };
      }

      /** The gate's canary entry: what loopgate planted in this run (names included) and whether it failed. */
      function canaryRecord(t: TamperCheck, failed: boolean | undefined): GateTamper["canary"] {
        const planted = t.plan?.canary ?? null;
        return {
          auto: planted !== null,
          declared: canary !== null,
          ...(planted
            ? { tests: planted.tests.slice(0, MAX_CANARY_NAMES).map((n) => boundText(n, 200)) }
            : {}),
          ...(planted && failed !== undefined ? { failed_as_expected: failed } : {}),
        };
      }

      /**
       * The second run of a declared canary: `passed` true means the canary did not fail, which the
       * caller turns into "tampered". With loopgate's own canary planted too, its tests must still fail.
       */
      function judgeDeclaredCanary(
        exitCode: number,
        t: TamperCheck,
        output: string,
        reportText: string | null,
        base: Omit<GateResult, "passed" | "timed_out" | "error" | "summary">,
      ): GateResult {
        const own = verdictOf(t, output, exitCode, { min: 1, source: "default" }, reportText);
        if (own?.error === "tampered" || own?.error === "unreadable")
          return { ...base, passed: true, timed_out: false, error: own.error, summary: own.summary };
        const failed = declaredCanaryFailed(t, output, reportText, ctx.declaredCanary ?? [], ctx.gateEnv);
        const canaryPassed = failed === null ? exitCode === 0 : !failed;
        return {
          ...base,
          passed: canaryPassed,
          timed_out: false,
          error: null,
          summary: canaryPassed ? "the declared canary's tests passed" : "the declared canary's tests failed",
        };
      }
    },
  };
}

/**
 * Whether loopgate's own canary, planted in this run, failed where it had to and made the runner exit
 * non-zero; undefined when the run planted none or its report cannot be read.
 */
function plantedCanaryFailed(
  t: TamperCheck,
  output: string,
  reportText: string | null,
  exitCode: number,
): boolean | undefined {
  const planted = t.plan?.canary;
  if (!planted || !t.plan || !t.adapter) return undefined;
  const report = t.adapter.parse(output, reportText, t.plan);
  if (!report) return undefined;
  return canaryProblem(report, planted) === null && exitCode !== 0;
}

/** A failed gate's summary, with what would help when the log shows a runner that could not write its own tree. */
function withHint(summary: string, output: string): string {
  const hint = readOnlyHint(output);
  return hint ? `${summary}; ${hint}` : summary;
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
  dependencies: readonly { source: string; target: string }[],
): { summary: string; infrastructure: string | null } | null {
  const fromHost = !program.includes("/") || (isAbsolute(program) && !isInside(gateEnv, program));
  const resolved = resolveProgram(throughDependencies(program, gateEnv, dependencies), gateEnv);
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

/**
 * A program inside a shared dependency folder (`node_modules/.bin/vitest`) exists in the sandbox, where the
 * store's copy is mounted, not in the host's gate environment (an empty mount point there): look for it in
 * the copy. Anything else is looked up as given.
 */
function throughDependencies(
  program: string,
  gateEnv: string,
  dependencies: readonly { source: string; target: string }[],
): string {
  if (!program.includes("/")) return program;
  const abs = resolve(gateEnv, program);
  for (const d of dependencies)
    if (abs === d.target || abs.startsWith(`${d.target}/`)) return d.source + abs.slice(d.target.length);
  return program;
}

/** The signal behind an exit status of 128+N, or null when the status is an ordinary exit. */
function signalOfExit(code: number): string | null {
  if (code <= 128) return null;
  return Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0] ?? null;
}
