import { InfrastructureError } from "../core/kernel/errors.js";
import { systemTool } from "./environment.js";

/**
 * A sandbox dies with loopgate from its first instruction on. bwrap's --die-with-parent (and setpriv's
 * after the privilege drop) takes effect only once bwrap itself runs, several programs after the fork:
 * a loopgate killed in between (kill -9, the OOM killer, a test that kills it on purpose) left a sandbox
 * running that no one would ever stop, one that waits on a pipe forever among them. So every sandbox
 * starts with deathSignalArgv (the kernel's parent-death signal, SIGKILL, set right after the fork's
 * exec), and then checks that loopgate is still its parent (parentCheck): if loopgate died before the
 * signal was set, the check finds another parent and the sandbox never starts.
 */
export function deathSignalArgv(): string[] {
  const setpriv = systemTool("setpriv");
  if (!setpriv)
    throw new InfrastructureError(
      "setpriv (util-linux) is not installed, so a sandbox cannot be tied to loopgate's life; install util-linux",
    );
  return [setpriv, "--pdeathsig=SIGKILL", "--"];
}

/**
 * Shell lines that exit unless the shell's parent is process `$<variable>` (loopgate: every program
 * before the shell execs in place, so the fork's parent is still the shell's). Exit status 125.
 */
export const parentCheck = (variable: string): string => `[ "$PPID" = "$${variable}" ] || exit 125`;

/** For sandboxes without a stage shell: a shell that checks the parent, then execs the rest. */
export function parentCheckArgv(parent: number = process.pid): string[] {
  const sh = systemTool("sh");
  if (!sh) throw new InfrastructureError("sh is not installed; install dash or another POSIX shell");
  return [sh, "-c", `${parentCheck("1")}\nshift\nexec "$@"`, "parent-check", String(parent)];
}
