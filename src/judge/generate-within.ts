import type { ModelAdapter, ModelRequest, ModelResponse } from "../core/agent/model-boundary.js";
import { type LongTimer, setLongTimeout } from "../core/kernel/long-timer.js";

/**
 * One model request with a hard deadline, for quarantined single calls (the judge, step escalation).
 * The deadline aborts the request and answers `timeout`; so does `signal` (an interrupt), at once. Like
 * the model boundary, it never throws.
 */
export async function generateWithin(
  model: ModelAdapter,
  request: Omit<ModelRequest, "signal">,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ModelResponse | "timeout"> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted) return "timeout";
  signal?.addEventListener("abort", onAbort, { once: true });
  let timer: LongTimer | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setLongTimeout(() => {
      controller.abort();
      resolve("timeout");
    }, timeoutMs);
    controller.signal.addEventListener("abort", () => resolve("timeout"), { once: true });
  });
  try {
    return await Promise.race([model.generate({ ...request, signal: controller.signal }), timeout]);
  } catch (e) {
    return { ok: false, error: { kind: "provider", message: String(e), retryable: false } };
  } finally {
    timer?.clear();
    signal?.removeEventListener("abort", onAbort);
  }
}
