import { InfrastructureError } from "../core/kernel/errors.js";
import { DEFAULT_LIMITS, type ProcessLimits } from "../core/task/limits.js";
import { systemTool } from "./environment.js";

/** The rlimits every builder and gate process gets unless its task says otherwise. */
export const DEFAULT_PROCESS_LIMITS: ProcessLimits = {
  processes: DEFAULT_LIMITS.processes,
  fileSize: DEFAULT_LIMITS.file_size,
  memory: DEFAULT_LIMITS.memory,
};

/**
 * The `prlimit` prefix that puts `limits` on a sandbox and everything it starts (rlimits are
 * inherited and a process without CAP_SYS_RESOURCE cannot raise its hard limit; bwrap drops every
 * capability). No cgroup is needed, so it works the same in a container and on a laptop.
 *
 * - RLIMIT_NPROC is not set here: outside the sandbox it would count the user's whole session (and
 *   every concurrent sandbox). Sandboxed runs get it from nprocInsideArgv; unsandboxed runs go without.
 * - RLIMIT_FSIZE: a write or truncate past it fails with EFBIG and SIGXFSZ.
 * - RLIMIT_DATA, not RLIMIT_AS: the heap that is really used, where address space would refuse
 *   the large PROT_NONE reservations of V8, Go and wasm.
 */
export function prlimitArgv(limits: ProcessLimits): string[] {
  const prlimit = systemTool("prlimit");
  if (!prlimit)
    throw new InfrastructureError(
      "prlimit (util-linux) is not installed, so builders and gates cannot be given process, memory and file-size limits; install util-linux",
    );
  const both = (n: number) => `${n}:${n}`;
  return [prlimit, `--fsize=${both(limits.fileSize)}`, `--data=${both(limits.memory)}`, "--"];
}

/**
 * The `prlimit` prefix that puts only RLIMIT_NPROC on a process, run inside the sandbox. The kernel counts
 * a user's processes in each user namespace and in every namespace above it, each level against the
 * limit that namespace's creator had: set outside, the limit would bind the sum of all the user's
 * processes (a whole desktop session, or, with loopgate as root, every concurrent sandbox, which all run
 * as the sandbox user); set inside bubblewrap's new namespace, it binds this sandbox alone. The kernel
 * never applies it to host root (uid 0); as root, sandboxed code runs as an unprivileged user
 * (privilege-drop.ts), so it binds there too. The sandboxed code cannot raise it: no capabilities.
 */
export function nprocInsideArgv(limits: ProcessLimits): string[] {
  const prlimit = systemTool("prlimit");
  if (!prlimit) throw new InfrastructureError("prlimit (util-linux) is not installed; install util-linux");
  return [prlimit, `--nproc=${limits.processes}:${limits.processes}`, "--"];
}

/**
 * What a builder's end says about a limit it ran into, for the record; null when nothing does.
 * bubblewrap reports a child killed by a signal as exit 128 + the signal's number, so 153 is SIGXFSZ.
 */
export function limitStop(
  exitCode: number | null,
  signal: string | null,
  limits: ProcessLimits,
): string | null {
  if (signal === "SIGXFSZ" || exitCode === 128 + 25)
    return `stopped by limits.file_size: a process wrote past ${limits.fileSize} bytes (SIGXFSZ${signal ? "" : ", exit 153"})`;
  return null;
}
