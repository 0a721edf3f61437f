import { sessionStream } from "../../builders/stop-gate/hook-input.js";
import {
  type HookSessionView,
  nextForHookSession,
  projectHookSession,
} from "../../core/agent/hook-session-state.js";
import type { RecordedEvent } from "../../core/events/loopgate-event.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import { oneLine } from "./excerpt.js";
import { EXIT_NOT_FINISHED, exitCodeOf } from "./exit-codes.js";
import { type Hints, hintCommand } from "./hints.js";
import { shellWord } from "./store-location.js";

/** The stream prefix of a user's own Claude Code session (`loopgate hook post-tool` appends there). */
export const SESSION_PREFIX = "claude-session-";

/** One hook session as `runs`, `status` and `events` show it (`--json`: a row of `runs` with this `kind`). */
export type HookSessionRow = HookSessionView & {
  kind: "hook-session";
  stream: string;
  /** The pasteable `loopgate verify …` of an unverified session; null when verified or its task is unknown. */
  hint: string | null;
};

/** The row of one session stream: its projection, the id from the stream when no event names it, the hint. */
export function hookSessionRow(
  stream: string,
  events: readonly RecordedEvent[],
  hints: Hints,
): HookSessionRow {
  const view = projectHookSession(events);
  const next = nextForHookSession(view);
  return {
    kind: "hook-session",
    stream,
    ...view,
    session_id: view.session_id ?? stream.slice(SESSION_PREFIX.length),
    hint:
      next.kind === "verify"
        ? hintCommand(hints, `verify ${shellWord(next.task_file)} --workspace ${shellWord(next.workspace)}`)
        : null,
  };
}

/** The latest `limit` hook sessions of the store (by last activity), and how many there are. */
export async function listHookSessions(
  store: EventStore,
  limit: number,
  hints: Hints,
): Promise<{ rows: HookSessionRow[]; total: number }> {
  const all = await store.listStreams({ prefix: SESSION_PREFIX });
  const rows: HookSessionRow[] = [];
  for (const s of all.slice(0, limit))
    rows.push(hookSessionRow(s.stream, await store.readStream(s.stream), hints));
  return { rows, total: all.length };
}

/**
 * The session `arg` names — its stream (`claude-session-ID`) or its id as Claude Code reported it — or
 * null when the store holds no such session.
 */
export async function findHookSession(
  store: EventStore,
  arg: string,
): Promise<{ stream: string; events: RecordedEvent[] } | null> {
  const stream = arg.startsWith(SESSION_PREFIX) ? arg : sessionStream(arg);
  if (!/^[\w-]+$/.test(stream)) return null;
  const events = await store.readStream(stream);
  return events.length ? { stream, events } : null;
}

const verdictOf = (r: HookSessionRow) =>
  r.last_verification ? `${r.last_verification.status} (run ${r.last_verification.run_id})` : "";

/** A session's one line in `loopgate runs`, and its hint under it when unverified. */
export function hookSessionLines(r: HookSessionRow): string {
  const task = oneLine(r.task_id ?? "(task unknown)");
  const calls = `${r.tool_calls} tool call(s)`;
  const what =
    r.state === "verified"
      ? `${verdictOf(r)}, ${calls}`
      : r.last_verification
        ? `${r.calls_since_verified} of ${calls} after the last verified Stop (${verdictOf(r)})`
        : `${calls}, no Stop verified`;
  const at = r.last_activity_at ? `, last activity ${r.last_activity_at}` : "";
  return `${oneLine(r.session_id ?? r.stream)}  ${r.state.padEnd(12)} ${task}  ${what}${at}\n${hintLine(r)}`;
}

const hintLine = (r: HookSessionRow) =>
  r.state === "verified"
    ? ""
    : r.hint
      ? `  verify it: ${oneLine(r.hint)}\n`
      : "  its task is not recorded (hooks older than this loopgate): loopgate verify TASK --workspace DIR\n";

/** `loopgate status SESSION`: where the session stands and what to do; the exit code says the same. */
export function hookSessionStatus(r: HookSessionRow, hints: Hints): { text: string; exit: number } {
  const head = `${r.state === "verified" ? "VERIFIED" : "UNVERIFIED"} · hook session ${oneLine(r.session_id ?? r.stream)} · task ${oneLine(r.task_id ?? "(unknown)")} · ${r.tool_calls} tool call(s)`;
  const lines = [head];
  if (r.cwd) lines.push(`folder: ${oneLine(r.cwd)}`);
  if (r.state === "verified" && r.last_verification)
    lines.push(
      `its last Stop was verified after its last tool call: ${verdictOf(r)}; details: ${hintCommand(hints, `status ${r.last_verification.run_id}`)}`,
    );
  else
    lines.push(
      r.last_verification
        ? `${r.calls_since_verified} tool call(s) came after its last verified Stop (${verdictOf(r)}): the folder it left was never checked`
        : "no Stop of this session was verified: the agent ended, or is still working, with nothing checking the folder it leaves (an agent that edits its settings can switch its hooks off)",
    );
  const hint = hintLine(r);
  if (hint) lines.push(hint.trimEnd().replace(/^ {2}/, ""));
  lines.push(`its events: ${hintCommand(hints, `events ${r.stream}`)}`);
  return {
    text: `${lines.join("\n")}\n`,
    exit:
      r.state === "verified" && r.last_verification
        ? exitCodeOf(r.last_verification.status)
        : EXIT_NOT_FINISHED,
  };
}
