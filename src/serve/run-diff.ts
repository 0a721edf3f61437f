import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ObservedEntry } from "../core/observation/observation.js";
import { acceptedChange } from "../runner/goal/repo/deliverables.js";
import { loadTask } from "../runner/task-source/load-task.js";
import type { EventStore } from "../store/kernel/event-store.js";
import { ObservationStore } from "../workspace/observation-store.js";
import { unifiedDiff } from "./line-diff.js";
import type { RunFacts } from "./run-facts.js";

/** The most files one diff lists, the most characters one file's diff shows, and the most in all. */
export const DIFF_LIMITS = { files: 200, fileChars: 60_000, totalChars: 400_000, fileBytes: 2_000_000 };

/** One path of the change the gates saw. */
export interface DiffFile {
  path: string;
  change: "added" | "modified" | "removed";
  /** The unified diff (bounded), or null when there is none to show (`note` says why). */
  text: string | null;
  note: string | null;
}

/** The change the gates of a run's last attempt were built from, or why it cannot be shown. */
export interface GateDiff {
  attempt: number | null;
  files: DiffFile[];
  /** Files past DIFF_LIMITS.files, not listed. */
  omitted: number;
  unavailable: string | null;
}

const unavailable = (why: string): GateDiff => ({ attempt: null, files: [], omitted: 0, unavailable: why });

async function content(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch {
    return null;
  }
}

const binary = (b: Buffer) => b.subarray(0, 8000).includes(0);

/**
 * What the gates of the run's last attempt saw change: the gate-change plan recomputed from the run's
 * pristine and after-builder observations by its task's deliverables and protected paths (the writeback's
 * own reader, runner/goal/repo/deliverables.ts), refused when it is not the plan the gates recorded. The
 * text of each file is passed through `redact` (the server's provider keys), bounded, and never includes
 * held-out material: only the builder's workspace and its pristine copy are read.
 */
export async function gateDiff(
  store: EventStore,
  localDir: string,
  facts: RunFacts,
  redact: (s: string) => string,
): Promise<GateDiff> {
  const started = facts.started;
  if (!started) return unavailable("the run recorded no run_started");
  if (!facts.events.some((e) => e.type === "workspace_observed" && e.data.phase === "after_builder"))
    return unavailable("no attempt's work was observed yet");
  let change: Awaited<ReturnType<typeof acceptedChange>>;
  try {
    change = await acceptedChange(store, facts.runId, loadTask(started.task_path), localDir, facts.events);
  } catch (e) {
    return unavailable(
      `the diff needs the task file (${started.task_path}) and the run's observations, kept in its folder until gc removes it (its events stay): ${(e as Error).message.split("\n")[0]}`,
    );
  }
  if (change.refusal)
    return unavailable(`the change recomputed is not the one the gates recorded: ${change.refusal}`);
  let pristineId = "";
  let attempt = 0;
  for (const e of facts.events)
    if (e.type === "workspace_observed") {
      if (e.data.phase === "pristine") pristineId = e.data.observation_id;
      else attempt = e.data.attempt;
    }
  const runDir = store.content ? join(localDir, "runs", facts.runId) : started.run_dir;
  const pristine = new Map<string, ObservedEntry>();
  try {
    for (const e of (await new ObservationStore(join(runDir, "observations")).get(pristineId)).entries)
      pristine.set(e.path, e);
  } catch (e) {
    return unavailable(`the run's pristine observation cannot be read: ${(e as Error).message}`);
  }
  const files: DiffFile[] = [];
  let total = 0;
  const paths = [
    ...change.carry
      .filter((e) => e.type !== "dir")
      .map((e) => ({ path: e.path, after: e as ObservedEntry | null })),
    ...change.drop.filter((p) => pristine.get(p)?.type !== "dir").map((p) => ({ path: p, after: null })),
  ].sort((a, b) => (a.path < b.path ? -1 : 1));
  for (const { path, after } of paths.slice(0, DIFF_LIMITS.files)) {
    const before = pristine.get(path) ?? null;
    const kind: DiffFile["change"] = !after ? "removed" : before ? "modified" : "added";
    const file = (text: string | null, note: string | null): DiffFile => ({ path, change: kind, text, note });
    const describe = (e: ObservedEntry | null) =>
      e === null
        ? ""
        : e.type === "file"
          ? `${e.size} bytes`
          : e.type === "symlink"
            ? `symlink → ${e.target}`
            : e.type;
    if ((before && before.type !== "file") || (after && after.type !== "file")) {
      files.push(file(null, `${describe(before) || "absent"} → ${describe(after) || "absent"}`));
      continue;
    }
    if ((before?.size ?? 0) > DIFF_LIMITS.fileBytes || (after?.size ?? 0) > DIFF_LIMITS.fileBytes) {
      files.push(
        file(
          null,
          `too large to show here: ${describe(before) || "absent"} → ${describe(after) || "absent"}`,
        ),
      );
      continue;
    }
    const [old, now] = await Promise.all([
      before ? content(change.blobPath(before.hash)) : Buffer.alloc(0),
      after ? content(change.blobPath(after.hash)) : Buffer.alloc(0),
    ]);
    if (old === null || now === null) {
      files.push(file(null, "its stored content is gone (the run's folder was removed)"));
      continue;
    }
    if (binary(old) || binary(now)) {
      files.push(file(null, `binary: ${describe(before) || "absent"} → ${describe(after) || "absent"}`));
      continue;
    }
    if (before && after && before.hash === after.hash) {
      files.push(file(null, `mode ${before.mode.toString(8)} → ${after.mode.toString(8)}`));
      continue;
    }
    const text = unifiedDiff(redact(old.toString("utf8")), redact(now.toString("utf8")));
    if (text === null) {
      files.push(
        file(
          null,
          `too many lines to compare here: ${describe(before) || "absent"} → ${describe(after) || "absent"}`,
        ),
      );
      continue;
    }
    const room = Math.max(0, Math.min(DIFF_LIMITS.fileChars, DIFF_LIMITS.totalChars - total));
    const shown =
      text.length > room
        ? `${text.slice(0, room)}\n[… ${text.length - room} more characters of this diff not shown …]`
        : text;
    total += Math.min(text.length, room);
    files.push(file(shown, null));
  }
  return { attempt, files, omitted: Math.max(0, paths.length - DIFF_LIMITS.files), unavailable: null };
}
