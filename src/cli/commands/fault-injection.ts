/**
 * Fault injection for the crash-and-resume tests: with LOOPGATE_FAULT_KILL_AFTER_EVENTS=N the process
 * kills itself (SIGKILL, no clean-up) right after the run's N-th event is durably appended.
 */
export function faultInjection(): { afterAppend?: (runEvents: number) => void } {
  const at = process.env.LOOPGATE_FAULT_KILL_AFTER_EVENTS;
  if (at === undefined) return {};
  return {
    afterAppend: (count) => (count === Number(at) ? process.kill(process.pid, "SIGKILL") : undefined),
  };
}
