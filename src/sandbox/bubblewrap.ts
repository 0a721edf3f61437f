import { existsSync, lstatSync, readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InfrastructureError } from "../core/errors.js";
import type { ProcessLimits } from "../core/limits.js";
import { resolveProgram, SANDBOX_PATH, scrubbedEnv } from "./environment.js";
import { type ProcessResult, runProcess } from "./process.js";
import { DEFAULT_PROCESS_LIMITS, prlimitArgv } from "./process-limits.js";

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
  /** Fed to the sandboxed process's stdin. */
  input?: string | Buffer;
  /**
   * Host paths mounted at another path inside the sandbox (bubblewrap only), after every other mount, so
   * two trees can be run at the same visible path.
   */
  binds?: readonly { source: string; target: string; writable?: boolean }[];
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

/**
 * What the sandbox sees of the host's `/etc`: what name resolution, TLS roots, locale, the dynamic linker
 * and the runtimes need — never the whole folder, which holds `shadow`, `ssh` host keys, `ssl/private`,
 * service configurations with passwords and package-manager credentials (`npmrc`, `pip.conf`).
 * The README's sandbox section lists it; runtimes' own folders (RUNTIME_ETC) are added as found.
 */
export const SANDBOX_ETC: readonly string[] = [
  "alternatives",
  "ca-certificates",
  "ca-certificates.conf",
  "debian_version",
  "fonts",
  "gai.conf",
  "gitconfig",
  "group",
  "host.conf",
  "hostname",
  "hosts",
  "inputrc",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "locale.alias",
  "locale.gen",
  "localtime",
  "magic",
  "magic.mime",
  "mime.types",
  "mtab",
  "networks",
  "nsswitch.conf",
  "os-release",
  "passwd",
  "perl",
  "protocols",
  "python3",
  "python3.11",
  "resolv.conf",
  "rpc",
  "services",
  "shells",
  "ssl/certs",
  "ssl/openssl.cnf",
  "terminfo",
  "timezone",
];

/** Runtimes keep their configuration in `/etc/<name>…` folders (`java-17-openjdk`, `python3.11`, `ruby`). */
const RUNTIME_ETC = /^(java|python|perl|ruby|php|lua|guile|R$)/;

let runtimeEtc: string[] | null = null;
function runtimeEtcEntries(): string[] {
  if (runtimeEtc) return runtimeEtc;
  try {
    runtimeEtc = readdirSync("/etc").filter((n) => RUNTIME_ETC.test(n));
  } catch {
    runtimeEtc = [];
  }
  return runtimeEtc;
}

/** bwrap arguments for a read-only `/etc` holding only the curated entries (and a task's `extra` ones). */
function curatedEtc(extra: readonly string[]): string[] {
  const args = ["--tmpfs", "/etc"];
  for (const name of [...new Set([...SANDBOX_ETC, ...runtimeEtcEntries(), ...extra])].sort()) {
    const host = `/etc/${name}`;
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(host);
    } catch {
      continue;
    }
    if (name.includes("/")) args.push("--dir", host.slice(0, host.lastIndexOf("/")));
    if (st.isSymbolicLink()) args.push("--symlink", readlinkSync(host), host);
    else args.push("--ro-bind", host, host);
  }
  args.push("--remount-ro", "/etc");
  return args;
}

/** The bwrap argv for a spec: minimal read-only root, the given mounts, tmpfs /tmp, no caps, no network. */
export function bubblewrapArgv(spec: SandboxSpec, bwrap = "bwrap"): string[] {
  const args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"];
  if (spec.network) args.push("--share-net");
  args.push("--ro-bind", "/usr", "/usr", ...curatedEtc(spec.etc ?? []));
  for (const dir of SYSTEM_DIRS) {
    if (!existsSync(dir)) continue;
    const st = lstatSync(dir);
    if (st.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else args.push("--ro-bind", dir, dir);
  }
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  for (const m of mountOrder(spec)) args.push(...m);
  args.push("--chdir", spec.cwd, "--", ...spec.argv);
  return args;
}

const depth = (p: string) => p.split("/").filter(Boolean).length;

/**
 * The user mounts, parents before children: a mount only covers what an earlier one put there, so a
 * masked folder inside a read-only one stays masked and the run workspace inside a masked store still
 * appears. At equal depth: writable, then read-only (a read-only mount of the same path wins), then masks.
 */
function mountOrder(spec: SandboxSpec): string[][] {
  const ops: { path: string; args: string[] }[] = [
    ...spec.writable.map((p) => ({ path: p, args: ["--bind", p, p] })),
    ...spec.readonly.map((p) => ({ path: p, args: ["--ro-bind", p, p] })),
    ...(spec.binds ?? []).map((b) => ({
      path: b.target,
      args: [b.writable ? "--bind" : "--ro-bind", b.source, b.target],
    })),
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
  const options = {
    // With binds, spec.cwd may exist only inside the sandbox (bwrap's --chdir); bwrap itself starts in /.
    cwd: spec.binds?.length ? "/" : spec.cwd,
    env: spec.env,
    timeoutMs: spec.timeoutMs,
    ...(spec.maxOutputBytes !== undefined ? { maxOutputBytes: spec.maxOutputBytes } : {}),
    ...(spec.onOutput ? { onOutput: spec.onOutput } : {}),
    ...(spec.onStdout ? { onStdout: spec.onStdout } : {}),
    ...(spec.signal ? { signal: spec.signal } : {}),
    ...(spec.input !== undefined ? { input: spec.input } : {}),
    ...(spec.captureBytes !== undefined ? { captureBytes: spec.captureBytes } : {}),
  };
  const limits = spec.limits ?? DEFAULT_PROCESS_LIMITS;
  if (mode === "none") {
    if (spec.binds?.length)
      throw new InfrastructureError("bind mounts at another path need the bubblewrap sandbox");
    // A program that cannot be found is spawned bare, so it fails as a spawn error, not prlimit's 127.
    const found = resolveProgram(spec.argv[0] ?? "", spec.cwd, spec.env.PATH ?? SANDBOX_PATH);
    return runProcess(found ? [...prlimitArgv(limits, false), ...spec.argv] : spec.argv, options);
  }
  const bwrap = findBwrap();
  if (!bwrap) throw new InfrastructureError(BWRAP_REMEDY);
  return runProcess([...prlimitArgv(limits, true), ...bubblewrapArgv(spec, bwrap)], options);
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
