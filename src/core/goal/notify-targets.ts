import { NOTIFY_KINDS, type NotifyTarget } from "../events/goal/notify-events.js";
import { parseDuration } from "../kernel/duration.js";
import type { GoalFileNotify } from "./goal-file.js";
import { DEFAULT_NOTIFY_RETRY } from "./notify.js";

const seconds = (d: string | number) => Math.max(1, Math.round((parseDuration(d) ?? 1000) / 1000));

/**
 * The goal file's `notify:` list resolved once, as the goal stream records it: ids, the occurrences each
 * listens to, timeouts and retry policy in seconds, a command's folder (`dir`: the goal file's own).
 */
export function resolveNotifyTargets(
  list: readonly GoalFileNotify[] | undefined,
  dir: string,
): NotifyTarget[] {
  return (list ?? []).map((t, i) => {
    const kind = "command" in t ? "command" : "webhook";
    const common = {
      id: t.id ?? `${kind}-${i + 1}`,
      on: t.on ? [...new Set(t.on)] : [...NOTIFY_KINDS],
      timeout_seconds: seconds(t.timeout),
      retry: t.retry
        ? {
            max_attempts: t.retry.attempts,
            backoff_seconds: seconds(t.retry.backoff),
            max_backoff_seconds: seconds(t.retry.max_backoff),
          }
        : DEFAULT_NOTIFY_RETRY,
    };
    if ("command" in t) return { ...common, kind: "command", argv: t.command, cwd: dir };
    return { ...common, kind: "webhook", ...("url" in t ? { url: t.url } : { url_env: t.url_env }) };
  });
}
