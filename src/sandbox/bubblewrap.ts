import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InfrastructureError } from "../core/errors.js";
import { resolveProgram, SANDBOX_PATH, scrubbedEnv } from "./environment.js";
import { type ProcessResult, runProcess } from "./process.js";

/** What a sandboxed process may see and touch. Every path is mounted at its own host path. */
export interface SandboxSpec {
  argv: readonly string[];
  cwd: string;
  /** Directories mounted read-write. */
  writable: readonly string[];
  /** Files or directories mounted read-only, beyond the minimal system root. */
  readonly: readonly string[];
  env: Readonly<Record<string, string>>;
  network: boolean;
  timeoutMs: number;
  maxOutputBytes?: number;
  onOutput?: (chunk: string) => void;
  signal?: AbortSignal;
  /** Fed to the sandboxed process's stdin. */
  input?: string | Buffer;
}

/** How processes are isolated: bubblewrap, or nothing at all when the user explicitly opted out. */
export type SandboxMode = "bubblewrap" | "none";

const SYSTEM_DIRS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** The bwrap argv for a spec: minimal read-only root, the given mounts, tmpfs /tmp, no caps, no network. */
export function bubblewrapArgv(spec: SandboxSpec, bwrap = "bwrap"): string[] {
  const args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"];
  if (spec.network) args.push("--share-net");
  args.push("--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc");
  for (const dir of SYSTEM_DIRS) {
    if (!existsSync(dir)) continue;
    const st = lstatSync(dir);
    if (st.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else args.push("--ro-bind", dir, dir);
  }
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  // Writable mounts first, so a read-only mount nested inside one stays read-only.
  for (const p of spec.writable) args.push("--bind", p, p);
  for (const p of spec.readonly) args.push("--ro-bind", p, p);
  args.push("--chdir", spec.cwd, "--", ...spec.argv);
  return args;
}

/**
 * Runs a spec in bubblewrap, or directly when mode is "none". bwrap is started with exactly the
 * child's environment, so not even the sandbox's PID 1 (visible as /proc/1/environ) holds anything else.
 */
export function runSandboxed(spec: SandboxSpec, mode: SandboxMode): Promise<ProcessResult> {
  const options = {
    cwd: spec.cwd,
    env: spec.env,
    timeoutMs: spec.timeoutMs,
    ...(spec.maxOutputBytes !== undefined ? { maxOutputBytes: spec.maxOutputBytes } : {}),
    ...(spec.onOutput ? { onOutput: spec.onOutput } : {}),
    ...(spec.signal ? { signal: spec.signal } : {}),
    ...(spec.input !== undefined ? { input: spec.input } : {}),
  };
  if (mode === "none") return runProcess(spec.argv, options);
  const bwrap = findBwrap();
  if (!bwrap) throw new InfrastructureError(BWRAP_REMEDY);
  return runProcess(bubblewrapArgv(spec, bwrap), options);
}

/**
 * Where bwrap is: looked up on the caller's PATH like any program they run (so a PATH without it means
 * "not installed", as `loopgate doctor` reports it); the system directories when PATH is unset.
 */
export function findBwrap(path: string | undefined = process.env.PATH): string | null {
  return resolveProgram("bwrap", "/", path ?? `${SANDBOX_PATH}:/usr/sbin`);
}

/** What to do when bwrap is missing. */
export const BWRAP_REMEDY =
  "bubblewrap (bwrap) is not installed, so builders and gates cannot be isolated; install it " +
  "(Debian/Ubuntu: apt-get install -y bubblewrap) or, knowing the agent then runs unconfined, pass --unsafe-no-sandbox";

/**
 * Proves the sandbox isolates before anything relies on it: a writable workspace, a read-only system,
 * an unmounted secret directory, and no leaked environment. Throws InfrastructureError with the remedy.
 */
export async function sandboxSelfTest(): Promise<void> {
  if (!findBwrap()) throw new InfrastructureError(BWRAP_REMEDY);
  const root = await mkdtemp(join(tmpdir(), "loopgate-selftest-"));
  try {
    const ws = join(root, "ws");
    const secret = join(root, "secret");
    await writeFile(join(root, "marker"), "");
    const { mkdir } = await import("node:fs/promises");
    await mkdir(ws);
    await mkdir(secret);
    await writeFile(join(secret, "held-out"), "x");
    const script = [
      "echo ok > ok.txt",
      `if test -e ${secret}/held-out; then echo LEAK-HELDOUT; fi`,
      "if touch /usr/.loopgate-probe 2>/dev/null; then echo LEAK-WRITE; fi",
      "tr '\\0' '\\n' </proc/1/environ | sed 's/=.*//; s/^/ENVNAME:/'",
      "echo done",
    ].join("\n");
    const env = scrubbedEnv({ home: "/tmp" });
    const result = await runSandboxed(
      {
        argv: ["/bin/sh", "-c", script],
        cwd: ws,
        writable: [ws],
        readonly: [],
        env,
        network: false,
        timeoutMs: 15_000,
      },
      "bubblewrap",
    ).catch((e: unknown) => {
      throw new InfrastructureError(`sandbox self-test could not start bwrap: ${String(e)}`);
    });
    const out = result.output;
    if (result.exitCode !== 0 || !out.includes("done"))
      throw new InfrastructureError(
        `sandbox self-test failed: bwrap exited ${result.exitCode ?? result.signal}: ${out.trim().slice(0, 500)}. ` +
          "bubblewrap needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or root; " +
          "or pass --unsafe-no-sandbox knowing the agent then runs unconfined",
      );
    const leaked = [...out.matchAll(/^ENVNAME:(.+)$/gm)].map((m) => m[1]).filter((n) => n && !(n in env));
    if (leaked.length)
      throw new InfrastructureError(
        `sandbox self-test: PID 1 of the sandbox holds variables ${leaked.join(", ")}`,
      );
    for (const leak of ["LEAK-HELDOUT", "LEAK-WRITE"])
      if (out.includes(leak))
        throw new InfrastructureError(`sandbox self-test found ${leak}: refusing to run`);
    if (!existsSync(join(ws, "ok.txt")))
      throw new InfrastructureError("sandbox self-test: the workspace was not writable inside the sandbox");
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
