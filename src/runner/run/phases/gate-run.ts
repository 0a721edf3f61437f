import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fsPath } from "../../../core/kernel/path-bytes.js";
import type { ChangePlan } from "../../../core/observation/gate-change-plan.js";
import type { Observation } from "../../../core/observation/observation.js";
import type { GateIdentity } from "../../../core/task/task-lock.js";
import type { Gate, GateResult } from "../../../gates/gate.js";
import type { TestFloor } from "../../../gates/tamper/test-report.js";
import { buildGateEnvironment, removeGateEnvironment } from "../../../workspace/gate-environment.js";
import { overlayOf } from "../../../workspace/overlay-workspace.js";
import { listFiles } from "../../../workspace/tree-files.js";
import { dependencyMounts } from "../context/dependencies.js";
import { oracleTreeOf } from "../context/oracle-tree.js";
import type { RunContext } from "../context/run-context.js";

/** What a gate environment is built from: the attempt's observations and gate-change plan, with its digest. */
export type GateState = { pristine: Observation; after: Observation; plan: ChangePlan; planDigest: string };

/**
 * Runs one gate in a fresh environment built for this run only. A gate with a declared `canary` is run
 * a second time with the canary overlay (held-out tests that must FAIL): if the canary passes, the test
 * framework in that environment no longer reports failures — the builder's code patched it — and the
 * gate is not passed. The two runs cannot be told apart by the code under test: they happen in the same
 * folder, in random order, and the real run holds inert files of the same names and sizes where the
 * canary's files go, so neither the path nor the file count nor the listing differs.
 */
export async function runGateFresh(
  ctx: RunContext,
  gate: Gate,
  n: number,
  name: string,
  state: GateState,
  floor?: TestFloor,
  identity?: GateIdentity | null,
): Promise<GateResult> {
  const result = await runGate(ctx, gate, n, name, state, floor, identity);
  // What the environment was built from, recorded with the gate's result; an as-built baseline's
  // environment is not built from the plan, so it records none.
  return ctx.gateEnvironment.name === "pristine"
    ? { ...result, change_plan_digest: state.planDigest }
    : result;
}

async function runGate(
  ctx: RunContext,
  gate: Gate,
  n: number,
  name: string,
  state: GateState,
  floor?: TestFloor,
  identity?: GateIdentity | null,
): Promise<GateResult> {
  // A baseline policy of the forgery benchmark models other harnesses, which have no canary. Judged by
  // identity, a gate's held-out tests carry mutated twins in the same run, which replace the declared
  // canary's second run and its stand-ins (which code could tell apart by their content).
  const byIdentity = identity ? { identity } : {};
  if (!gate.canary || !ctx.gateEnvironment.runsCanary || replacesCanary(identity))
    return runIn(ctx, gate, n, name, state, [gate.heldout], { floor, ...byIdentity });
  const canaryFiles = listFiles(gate.canary);
  const pad = { dir: gate.canary, files: canaryFiles };
  const real = () => runIn(ctx, gate, n, name, state, [gate.heldout], { floor, pad });
  const canary = () =>
    runIn(ctx, gate, n, name, state, [gate.heldout, gate.canary], { floor, declaredCanary: canaryFiles });
  // The order is random so that neither run is always first; the verdict does not depend on it: a real
  // run that failed decides alone (the canary is then not needed), otherwise the canary run must fail.
  if (randomInt(2) === 1) {
    const c = await canary();
    return combine(await real(), c);
  }
  const first = await real();
  return first.passed ? combine(first, await canary()) : first;
}

/** Whether the run's twins stand in for a declared canary: recording, or a lock with twins for the gate. */
function replacesCanary(identity: GateIdentity | null | undefined): boolean {
  if (!identity) return false;
  return identity.mode === "record" || Object.keys(identity.gate.twins).length > 0;
}

function combine(real: GateResult, c: GateResult): GateResult {
  if (!real.passed) return real;
  const verdict = judgeCanary(c);
  return verdict ? { ...real, ...verdict(real) } : { ...real, duration_ms: real.duration_ms + c.duration_ms };
}

/** What a declared canary run says about the gate, or null when it failed as it must. */
function judgeCanary(c: GateResult): ((real: GateResult) => Partial<GateResult>) | null {
  if (c.error === "spawn_failed" || c.infrastructure) return () => ({ ...c, passed: false });
  if (c.timed_out)
    return () => ({
      passed: false,
      error: "timeout",
      summary: "its canary run timed out, so the gate cannot vouch for its own tests",
    });
  if (c.passed || c.error === "tampered" || c.error === "unreadable")
    return (real) => ({
      passed: false,
      error: "tampered",
      summary:
        c.error === "tampered" || c.error === "unreadable"
          ? `its canary run: ${c.summary}`
          : "its canary (a held-out test that must fail) passed: the test framework does not report failures here",
      log_excerpt: `${real.log_excerpt}\n[loopgate] canary run: expected a failure\n${c.log_excerpt.slice(-2000)}`,
    });
  return null;
}

/** Inert content of exactly `size` bytes for a file named like `path`: a comment in its language. */
export function inertPadding(path: string, original: string, size: number): string {
  const goPackage = path.endsWith(".go") ? (/^package\s+\w+/m.exec(original)?.[0] ?? "") : "";
  const hash = /\.(py|sh|rb|pl|toml|ya?ml|r)$/i.test(path);
  const head = goPackage ? `${goPackage}\n` : hash ? "#" : /\.(json)$/i.test(path) ? "" : "//";
  if (/\.json$/i.test(path)) return `${"{}".padEnd(Math.max(size, 2), " ")}`.slice(0, Math.max(size, 2));
  const body = `${head}${" ".repeat(Math.max(0, size - head.length - 1))}\n`;
  return body.length > size && size > head.length ? body.slice(0, size) : body;
}

async function runIn(
  ctx: RunContext,
  gate: Gate,
  n: number,
  name: string,
  state: GateState,
  overlays: [heldout: string | null, canary?: string | null],
  extra: {
    floor?: TestFloor | undefined;
    pad?: { dir: string; files: string[] };
    declaredCanary?: string[];
    identity?: GateIdentity;
  },
): Promise<GateResult> {
  const policy = ctx.gateEnvironment;
  const linked = ctx.sandbox === "bubblewrap" && !gate.writable && policy.mayLink;
  const envDir = join(ctx.runDir, "gate-env", name);
  const [heldout, canary] = overlays;
  try {
    removeGateEnvironment(envDir);
    await mkdir(join(ctx.runDir, "gate-env"), { recursive: true });
    await buildGateEnvironment(
      policy.spec({
        pristineDir: ctx.pristineDir,
        pristine: state.pristine,
        workspaceDir: ctx.workspace,
        after: state.after,
        plan: state.plan,
        ...(heldout ? { heldoutDir: heldout } : {}),
        ...(canary ? { canaryDir: canary } : {}),
        ...(extra.pad ? { padding: { files: padding(extra.pad), modesFrom: extra.pad.dir } } : {}),
        destDir: envDir,
        link: linked,
        layered: policy.mayLink && layered(ctx, state.pristine),
      }),
    );
    return await gate.run({
      gateEnv: envDir,
      runId: ctx.journal.runId,
      attempt: n,
      taskId: ctx.loaded.task.id,
      sandbox: ctx.sandbox,
      processLimits: ctx.loaded.resolved.limits,
      readOnly: linked,
      ...(ctx.dependencies.length ? { dependencies: dependencyMounts(ctx.dependencies, envDir) } : {}),
      oracleTree: oracleTreeOf(ctx), // differential gates only; built on first use
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(extra.floor ? { testFloor: extra.floor } : {}),
      ...(extra.declaredCanary ? { declaredCanary: extra.declaredCanary } : {}),
      ...(extra.identity ? { identity: extra.identity } : {}),
      ...(policy.exitCodeOnly ? { exitCodeOnly: true } : {}),
      ...(ctx.reporter.gateOutput
        ? { onOutput: (chunk: string) => ctx.reporter.gateOutput?.(gate.id, chunk) }
        : {}),
    });
  } finally {
    removeGateEnvironment(envDir);
  }
}

/**
 * The size of pristine tree from which a gate environment is an overlay: its mount and unmount cost about
 * 9 ms, a linked build about 2 ms plus 20 µs an entry (bench/workspace-bench.ts has the figures), so below
 * a few hundred entries links are cheaper; above, the overlay's cost no longer grows with the tree.
 */
export const GATE_OVERLAY_MIN_ENTRIES = 500;

/**
 * Whether a gate environment is an overlay on the run's pristine tree: when the run's workspace is one
 * (its pristine tree is then the task's snapshot, a lower layer no mount ever writes) and the tree is
 * large enough for it to pay, so the environment costs what the builder changed, like the workspace.
 */
function layered(ctx: RunContext, pristine: Observation): boolean {
  return pristine.entries.length >= GATE_OVERLAY_MIN_ENTRIES && overlayOf(ctx.runDir) !== null;
}

/** Inert files of the same names and sizes as the canary's, for the real run. */
function padding(pad: { dir: string; files: string[] }): { path: string; content: string }[] {
  return pad.files.map((f) => {
    const original = readFileSync(fsPath(join(pad.dir, f)), "utf8"); // f is encoded (path-bytes.ts)
    return { path: f, content: inertPadding(f, original, Buffer.byteLength(original)) };
  });
}
