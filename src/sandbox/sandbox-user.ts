import { readFileSync } from "node:fs";
import { InfrastructureError } from "../core/kernel/errors.js";

/** The unprivileged account sandboxed code runs as when loopgate itself runs as root. */
export interface SandboxUser {
  uid: number;
  gid: number;
}

/** nobody / nogroup on Debian and most distributions. */
export const DEFAULT_SANDBOX_ID = 65534;

/**
 * Who sandboxed code runs as: null when loopgate is not root (it then runs as the caller, who is
 * already unprivileged), else uid/gid 65534 or `LOOPGATE_SANDBOX_UID` / `LOOPGATE_SANDBOX_GID`.
 * A dedicated account is better than `nobody`: other daemons that run as `nobody` share its process
 * count (RLIMIT_NPROC) and could signal or ptrace sandboxed code, and it could signal them.
 * Root (0) is refused for either: that would undo the drop.
 */
export function sandboxUser(
  env: NodeJS.ProcessEnv = process.env,
  euid: number = process.geteuid?.() ?? -1,
): SandboxUser | null {
  if (euid !== 0) return null;
  return {
    uid: idFrom(env, "LOOPGATE_SANDBOX_UID"),
    gid: idFrom(env, "LOOPGATE_SANDBOX_GID"),
  };
}

/**
 * Who code sandboxed in `mode` runs as, and so who must own what it may write: the sandbox user under
 * bubblewrap (null when loopgate is not root), and loopgate itself, null, without a sandbox.
 */
export function sandboxedAs(mode: "bubblewrap" | "none"): SandboxUser | null {
  return mode === "bubblewrap" ? sandboxUser() : null;
}

function idFrom(env: NodeJS.ProcessEnv, name: string): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return DEFAULT_SANDBOX_ID;
  const n = /^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n <= 0 || n >= 2 ** 32 - 1)
    throw new InfrastructureError(
      `${name}=${JSON.stringify(raw.slice(0, 40))} is not a usable id: give a positive number other than 0 ` +
        `(root) and 4294967295, e.g. the uid of an account made for loopgate's sandbox (default ${DEFAULT_SANDBOX_ID}, nobody)`,
    );
  return n;
}

/** The account name of `uid` in the host's /etc/passwd, or null when it has none. */
export function accountName(uid: number, passwd = "/etc/passwd"): string | null {
  let text: string;
  try {
    text = readFileSync(passwd, "utf8");
  } catch {
    return null;
  }
  for (const line of text.split("\n")) {
    const [name, , id] = line.split(":");
    if (name && id === String(uid)) return name;
  }
  return null;
}

/** One line saying what runs as whom, for `loopgate doctor`. */
export function privilegeSummary(user: SandboxUser | null, callerUid: number): string {
  if (!user) return `loopgate runs unprivileged: sandboxed code runs as you (uid ${callerUid})`;
  const name = accountName(user.uid);
  return `loopgate runs as root; builders, gates, oracles and agent tools run as uid ${user.uid}${
    name ? ` (${name})` : ""
  }, gid ${user.gid}, no supplementary groups, no capabilities (with --unsafe-no-sandbox they run as root)`;
}
