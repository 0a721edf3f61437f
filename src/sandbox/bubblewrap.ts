import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InfrastructureError } from "../core/kernel/errors.js";
import type { ProcessLimits } from "../core/task/limits.js";
import { resolveProgram, SANDBOX_PATH, scrubbedEnv } from "./environment.js";
import { deathSignalArgv, parentCheckArgv } from "./parent-death.js";
import { type StagedSource, stagedBubblewrap } from "./privilege-drop.js";
import { type ProcessResult, type RunProcessOptions, runProcess } from "./process.js";
import { DEFAULT_PROCESS_LIMITS, nprocInsideArgv, prlimitArgv } from "./process-limits.js";
import { curatedEtc } from "./sandbox-etc.js";
import { seccompProgram } from "./seccomp.js";

export { SANDBOX_ETC } from "./sandbox-etc.js";

import { handToSandboxUser } from "./sandbox-owner.js";
import { sandboxedAs } from "./sandbox-user.js";

/** What a sandboxed process may see and touch. Every path is mounted at its own host path. */
export interface SandboxSpec {
  argv: readonly string[];
  cwd: string;
  /** Directories mounted read-write. */
  writable: readonly string[];
  /** Files or directories mounted read-only, beyond the minimal system root. */
  readonly: readonly string[];
  /**
   * Paths hidden inside a read-only mount (an empty tmpfs over a directory, /dev/null over a file):
   * an oracle's folder is mounted, its held-out folders and the event log beside it are not.
   */
  masked?: readonly string[];
  env: Readonly<Record<string, string>>;
  network: boolean;
  timeoutMs: number;
  maxOutputBytes?: number;
  onOutput?: (chunk: string) => void;
  /** Each chunk of stdout alone (see RunProcessOptions.onStdout). */
  onStdout?: (chunk: string) => void;
  signal?: AbortSignal;
  /** SIGTERM on abort, SIGKILL this much later (RunProcessOptions.killGraceMs). */
  killGraceMs?: number;
  /** Fed to the sandboxed process's stdin. */
  input?: string | Buffer;
  /**
   * Host paths mounted at another path inside the sandbox (bubblewrap only), after every other mount, so
   * two trees can be run at the same visible path.
   */
  binds?: readonly { source: string; target: string; writable?: boolean }[];
  /**
   * Shared dependency folders (bubblewrap only): `target` is a private tmpfs holding each top-level entry
   * of `source` read-only, so a runner may add caches beside them (node_modules/.vite) that vanish with
   * the sandbox, and nothing it does reaches `source` (see dependencyMountArgs).
   */
  dependencies?: readonly { source: string; target: string }[];
  /** Keep stdout and stderr apart, byte for byte, up to this many bytes each (ProcessResult.streams). */
  captureBytes?: number;
  /** Process, file-size and memory rlimits of the sandbox (default DEFAULT_PROCESS_LIMITS). */
  limits?: ProcessLimits;
  /** Names under the host's `/etc` to show beyond SANDBOX_ETC. */
  etc?: readonly string[];
}

/** How processes are isolated: bubblewrap, or nothing at all when the user explicitly opted out. */
export type SandboxMode = "bubblewrap" | "none";

const SYSTEM_DIRS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** The descriptor on which bwrap reads the seccomp filter (RunProcessOptions.fd3Input). */
export const SECCOMP_FD = 3;

/**
 * The bwrap argv for a spec: minimal read-only root, the given mounts, tmpfs /tmp, no caps, no network.
 * `source` maps each user mount's host path to the path bwrap opens (the stage of a privilege drop);
 * with `seccompFd`, bwrap loads the filter it reads there (seccomp.ts) and closes that descriptor.
 */
export function bubblewrapArgv(
  spec: SandboxSpec,
  bwrap = "bwrap",
  source: (s: StagedSource) => string = (s) => s.source,
  seccompFd: number | null = null,
): string[] {
  const args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"];
  if (seccompFd !== null) args.push("--seccomp", String(seccompFd));
  if (spec.network) args.push("--share-net");
  args.push("--ro-bind", "/usr", "/usr", ...curatedEtc(spec.etc ?? []));
  for (const dir of SYSTEM_DIRS) {
    if (!existsSync(dir)) continue;
    const st = lstatSync(dir);
    if (st.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else args.push("--ro-bind", dir, dir);
  }
  // /proc read-only: opening /proc/PID/mem for writing (another process's memory, same uid) fails with EROFS;
  // the seccomp filter closes the system calls that reach into another process (seccomp.ts).
  args.push("--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  for (const m of mountOrder(spec, source)) args.push(...m);
  args.push("--chdir", spec.cwd, "--", ...spec.argv);
  return args;
}

const depth = (p: string) => p.split("/").filter(Boolean).length;

/**
 * The user mounts, parents before children: a mount only covers what an earlier one put there, so a
 * masked folder inside a read-only one stays masked and the run workspace inside a masked store still
 * appears. At equal depth: writable, then read-only (a read-only mount of the same path wins), then masks.
 */
function mountOrder(spec: SandboxSpec, source: (s: StagedSource) => string): string[][] {
  const ops: { path: string; args: string[] }[] = [
    ...spec.writable.map((p) => ({ path: p, args: ["--bind", source({ source: p, writable: true }), p] })),
    ...spec.readonly.map((p) => ({
      path: p,
      args: ["--ro-bind", source({ source: p, writable: false }), p],
    })),
    ...(spec.binds ?? []).map((b) => ({
      path: b.target,
      args: [
        b.writable ? "--bind" : "--ro-bind",
        source({ source: b.source, writable: b.writable === true }),
        b.target,
      ],
    })),
    ...(spec.dependencies ?? []).flatMap((d) => dependencyMountArgs(d.source, d.target, source)),
    // A path that does not exist has nothing to hide (and bwrap could not create it in a read-only mount).
    ...(spec.masked ?? []).filter(existsSync).map((p) => ({
      path: p,
      args: isDirectory(p) ? ["--tmpfs", p] : ["--ro-bind", "/dev/null", p],
    })),
  ];
  return ops
    .map((op, i) => ({ ...op, i }))
    .sort((a, b) => depth(a.path) - depth(b.path) || a.i - b.i)
    .map((op) => op.args);
}

/**
 * Folders of a dependency folder where runners keep caches (vite and vitest: node_modules/.vite; babel,
 * eslint and others: node_modules/.cache): each is covered by a private tmpfs, so writes there succeed and
 * vanish with the sandbox. runner/run/context/dependencies.ts makes them (empty) in every shared copy, as mount points.
 */
export const DEPENDENCY_CACHES: readonly string[] = [".vite", ".vitest", ".cache"];

/**
 * A dependency folder as mount operations: the folder read-only at `target` (one mount, whatever it holds),
 * then a tmpfs over each cache folder it has. bwrap 0.8 has no overlay mounts (`--tmp-overlay` came later).
 * The folder is reached through `stage` like every other mount source.
 */
function dependencyMountArgs(
  source: string,
  target: string,
  stage: (s: StagedSource) => string,
): { path: string; args: string[] }[] {
  const ops = [{ path: target, args: ["--ro-bind", stage({ source, writable: false }), target] }];
  for (const name of DEPENDENCY_CACHES)
    if (isDirectory(`${source}/${name}`))
      ops.push({ path: `${target}/${name}`, args: ["--tmpfs", `${target}/${name}`] });
  return ops;
}

function isDirectory(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Runs a spec in bubblewrap, or directly when mode is "none". bwrap is started with exactly the
 * child's environment, so not even the sandbox's PID 1 (visible as /proc/1/environ) holds anything else.
 */
export function runSandboxed(spec: SandboxSpec, mode: SandboxMode): Promise<ProcessResult> {
  // As root, sandboxed code runs as an unprivileged user (privilege-drop.ts), which must own what it may
  // write: handed over right before each run, since loopgate may have copied or restored files there since.
  // `none` (--unsafe-no-sandbox) isolates nothing, not even that: the process runs as loopgate does. Dropping
  // to another user without the sandbox's mounts would leave it unable to reach its own run folder (0700).
  const user = sandboxedAs(mode);
  const run = (argv: readonly string[], o: RunProcessOptions): Promise<ProcessResult> =>
    user
      ? handToSandboxUser(
          [...spec.writable, ...(spec.binds ?? []).filter((b) => b.writable).map((b) => b.source)],
          user,
        ).then(() => runProcess(argv, o))
      : runProcess(argv, o);
  const options = {
    // With binds, spec.cwd may exist only inside the sandbox (bwrap's --chdir); bwrap itself starts in /.
    cwd: spec.binds?.length ? "/" : spec.cwd,
    env: spec.env,
    timeoutMs: spec.timeoutMs,
    ...(spec.maxOutputBytes !== undefined ? { maxOutputBytes: spec.maxOutputBytes } : {}),
    ...(spec.onOutput ? { onOutput: spec.onOutput } : {}),
    ...(spec.onStdout ? { onStdout: spec.onStdout } : {}),
    ...(spec.signal ? { signal: spec.signal } : {}),
    ...(spec.killGraceMs !== undefined ? { killGraceMs: spec.killGraceMs } : {}),
    ...(spec.input !== undefined ? { input: spec.input } : {}),
    ...(spec.captureBytes !== undefined ? { captureBytes: spec.captureBytes } : {}),
  };
  const limits = spec.limits ?? DEFAULT_PROCESS_LIMITS;
  if (mode === "none") {
    if (spec.binds?.length)
      throw new InfrastructureError("bind mounts at another path need the bubblewrap sandbox");
    if (spec.dependencies?.length)
      throw new InfrastructureError("shared dependency folders need the bubblewrap sandbox");
    // A program that cannot be found is spawned bare, so it fails as a spawn error, not prlimit's 127.
    const found = resolveProgram(spec.argv[0] ?? "", spec.cwd, spec.env.PATH ?? SANDBOX_PATH);
    return run(found ? [...prlimitArgv(limits), ...spec.argv] : spec.argv, options);
  }
  const bwrap = findBwrap();
  if (!bwrap) throw new InfrastructureError(BWRAP_REMEDY);
  // RLIMIT_NPROC is set inside the sandbox's user namespace, so it counts this sandbox alone (nprocInsideArgv).
  const inner = { ...spec, argv: [...nprocInsideArgv(limits), ...spec.argv] };
  // The filter rides on descriptor 3 through every program before bwrap (setpriv, the parent check, prlimit,
  // and the privilege drop's unshare, stage script and setpriv, which all exec with it open); bwrap fails to
  // start if it cannot load it.
  const filter = seccompProgram();
  const fd = filter ? SECCOMP_FD : null;
  const withFilter = filter ? { ...options, fd3Input: filter } : options;
  // Tied to loopgate's life from the fork on (parent-death.ts); as root the stage shell checks the parent.
  if (!user)
    return run(
      [
        ...deathSignalArgv(),
        ...parentCheckArgv(),
        ...prlimitArgv(limits),
        ...bubblewrapArgv(inner, bwrap, undefined, fd),
      ],
      withFilter,
    );
  const argv = stagedBubblewrap(user, spec.env, (stage) => bubblewrapArgv(inner, bwrap, stage, fd));
  return run([...deathSignalArgv(), ...prlimitArgv(limits), ...argv], { ...withFilter, cwd: "/" });
}

/**
 * Where bwrap is: looked up on the caller's PATH like any program they run (so a PATH without it means
 * "not installed", as `loopgate doctor` reports it); the system directories when PATH is unset.
 */
export function findBwrap(path: string | undefined = process.env.PATH): string | null {
  const search = path ?? `${SANDBOX_PATH}:/usr/sbin`;
  if (foundBwrap?.search === search) return foundBwrap.at;
  const at = resolveProgram("bwrap", "/", search);
  foundBwrap = at ? { search, at } : null;
  return at;
}

/** Where bwrap was last found, and on which PATH (a miss is looked up again). */
let foundBwrap: { search: string; at: string } | null = null;

/** What to do when bwrap is missing. */
export const BWRAP_REMEDY =
  "bubblewrap (bwrap) is not installed, so builders and gates cannot be isolated; install it " +
  "(Debian/Ubuntu: apt-get install -y bubblewrap) or, knowing the agent then runs unconfined, pass --unsafe-no-sandbox";

/**
 * Proves the sandbox isolates before anything relies on it: a writable workspace, a read-only system,
 * an unmounted secret directory, no leaked environment, and the seccomp filter loaded (where loopgate has
 * a syscall table for this machine) with its descriptor closed. Throws InfrastructureError with the remedy.
 */
export async function sandboxSelfTest(): Promise<void> {
  if (!findBwrap()) throw new InfrastructureError(BWRAP_REMEDY);
  const root = await mkdtemp(join(tmpdir(), "loopgate-selftest-"));
  try {
    const ws = join(root, "ws");
    const secret = join(root, "secret");
    await writeFile(join(root, "marker"), "");
    await mkdir(ws);
    await mkdir(secret);
    await writeFile(join(secret, "held-out"), "x");
    const script = [
      "echo ok > ok.txt",
      `if test -e ${secret}/held-out; then echo LEAK-HELDOUT; fi`,
      "if touch /usr/.loopgate-probe 2>/dev/null; then echo LEAK-WRITE; fi",
      "tr '\\0' '\\n' </proc/1/environ | sed 's/=.*//; s/^/ENVNAME:/'",
      'if [ "$(id -u)" = 0 ]; then echo LEAK-ROOT; fi',
      "sed -n 's/^Seccomp:[[:space:]]*/SECCOMP:/p' /proc/self/status",
      `if [ -e /proc/$$/fd/${SECCOMP_FD} ]; then echo LEAK-FD; fi`,
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
    // Mode 2: a filter is loaded. bwrap refuses to start when it cannot load one, so this catches a filter
    // never passed; the syscalls it denies are tested in test/sandbox/seccomp.int.test.ts.
    if (seccompProgram() && !/^SECCOMP:2$/m.test(out))
      throw new InfrastructureError(
        `sandbox self-test: no seccomp filter inside the sandbox (${/^SECCOMP:.*$/m.exec(out)?.[0] ?? "no Seccomp line"}): refusing to run`,
      );
    for (const leak of ["LEAK-HELDOUT", "LEAK-WRITE", "LEAK-ROOT", "LEAK-FD"])
      if (out.includes(leak))
        throw new InfrastructureError(`sandbox self-test found ${leak}: refusing to run`);
    if (!existsSync(join(ws, "ok.txt")))
      throw new InfrastructureError("sandbox self-test: the workspace was not writable inside the sandbox");
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
