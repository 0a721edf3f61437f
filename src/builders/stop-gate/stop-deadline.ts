import { parseDuration } from "../../core/kernel/duration.js";

/**
 * How long a held Stop may wait for loopgate's answer, in seconds: the gates' run (each gate's timeout,
 * 60 s when it has none) twice over, plus a minute, and never under two minutes. The forwarder answers
 * with a block when it runs out, so a slow gate can never let the agent stop unchecked.
 */
export function stopDeadlineSeconds(gates: readonly object[]): number {
  const gateMs = gates.reduce((sum: number, g) => {
    const t = "timeout" in g ? g.timeout : undefined;
    return sum + ((typeof t === "string" || typeof t === "number" ? parseDuration(t) : null) ?? 60_000);
  }, 0);
  return Math.max(120, Math.ceil((2 * gateMs) / 1000) + 60);
}
