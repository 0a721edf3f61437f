import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { LogChange, LogWatcher } from "./live-feed.js";

/** How long an idle live connection waits before a keep-alive comment (proxies close silent ones). */
const KEEP_ALIVE_MS = 15_000;

/** A position from the query or Last-Event-ID: a whole number, else -1 (everything is news). */
const position = (v: string | undefined) => (v !== undefined && /^-?\d+$/.test(v) ? Number(v) : -1);

/**
 * `/live`: one page's Server-Sent Events. Each change of the log the watcher sees is sent as a `change`
 * event (`{position, streams}`, its id the position); a page that connects after the log moved past the
 * position it was rendered at (`?since=`, or the Last-Event-ID of a reconnection) first gets one change
 * naming every stream (`*`). `closers` holds one function per open connection, which ends it (the server's
 * shutdown calls them all).
 */
export function liveStream(c: Context, watcher: LogWatcher, closers: Set<() => void>): Response {
  const since = Math.max(position(c.req.query("since")), position(c.req.header("last-event-id")));
  return streamSSE(c, async (stream) => {
    let done = false;
    let wake: (() => void) | null = null;
    const queue: LogChange[] = [];
    if (watcher.position > since) queue.push({ position: watcher.position, streams: ["*"] });
    const off = watcher.subscribe((change) => {
      // What the page was rendered with already shows what happened up to `since`.
      if (change.position <= since) return;
      queue.push(change);
      wake?.();
    });
    const end = () => {
      done = true;
      wake?.();
    };
    closers.add(end);
    stream.onAbort(end);
    try {
      await stream.writeSSE({
        event: "hello",
        data: JSON.stringify({ position: watcher.position }),
        retry: 2000,
      });
      while (!done) {
        const change = queue.shift();
        if (change) {
          await stream.writeSSE({
            event: "change",
            data: JSON.stringify(change),
            id: String(change.position),
          });
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, KEEP_ALIVE_MS).unref();
        });
        wake = null;
        if (!done && queue.length === 0) await stream.write(": keep-alive\n\n");
      }
    } finally {
      off();
      closers.delete(end);
    }
  });
}
