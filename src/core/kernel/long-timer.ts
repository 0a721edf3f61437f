/**
 * The longest delay Node's setTimeout honours (2^31-1 ms, about 24.8 days): a longer one is replaced
 * by 1 ms, so a "600h" timeout would fire at once.
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** A pending long timer: `clear` cancels it; `unref` lets the process exit while it waits. */
export interface LongTimer {
  clear(): void;
  unref(): LongTimer;
}

/**
 * Calls `fn` once after `ms` milliseconds, however long: beyond setTimeout's limit it waits in steps of
 * at most MAX_TIMER_DELAY_MS, re-arming until the whole delay has passed. A negative or NaN delay
 * fires on the next turn, as setTimeout's does; Infinity never fires.
 */
export function setLongTimeout(fn: () => void, ms: number): LongTimer {
  let remaining = Number.isNaN(ms) ? 0 : Math.max(0, ms);
  let unref = false;
  let handle: NodeJS.Timeout;
  const arm = () => {
    const step = Math.min(remaining, MAX_TIMER_DELAY_MS);
    remaining -= step;
    handle = setTimeout(remaining > 0 ? arm : fn, step);
    if (unref) handle.unref();
  };
  arm();
  const timer: LongTimer = {
    clear: () => clearTimeout(handle),
    unref: () => {
      unref = true;
      handle.unref();
      return timer;
    },
  };
  return timer;
}
