import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { LeaseOwner } from "../../core/kernel/event-parts.js";

/** This process as a lease owner (of a run, a goal's turn), with a fresh random token. */
export function thisOwner(): LeaseOwner {
  return { pid: process.pid, host: hostname(), token: randomBytes(16).toString("hex") };
}

/**
 * True when `owner` ran on this host and its process no longer exists (kill(pid, 0) says ESRCH); null
 * for an owner on another host, which only the lease's expiry can tell. EPERM means it exists.
 */
export function ownerProcessGone(owner: LeaseOwner): boolean | null {
  if (owner.host !== hostname()) return null;
  if (owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}
