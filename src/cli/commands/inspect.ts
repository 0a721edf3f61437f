import type { RecordedEvent } from "../../core/events/loopgate-event.js";
import { projectEnvelope } from "../../core/run/envelope.js";
import { foldRun, verdict } from "../../core/run/run-decider.js";
import { GoalNotFoundError, goalStream } from "../../runner/goal/goal-store.js";
import { RunJournal } from "../../runner/stream/run-journal.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import type { JobSummary } from "../../store/open-store.js";
import { openStore, readRun, storeFrom } from "../output/context.js";
import { oneLine } from "../output/excerpt.js";
import { EXIT_NOT_FINISHED, exitCodeOf } from "../output/exit-codes.js";
import { formatEnvelope, formatEvent } from "../output/format.js";
import { goalEventLine, historyEvents } from "../output/goal-event-lines.js";
import { hintCommand, hintsFor } from "../output/hints.js";
import {
  findHookSession,
  hookSessionLines,
  hookSessionRow,
  hookSessionStatus,
  listHookSessions,
} from "../output/hook-sessions.js";
import type { CommandIO } from "../output/io.js";
import { jobExitCode, jobLine, jobStatusWord } from "../output/job-status.js";
import { queuedJob, queueState } from "../output/queue-state.js";
import { ownerReport } from "../output/run-owner.js";

/** One row of `loopgate runs`; `queue` for work of the run queue (a Postgres store). */
interface RunRow {
  run_id: string | null;
  task_id: string | null;
  status: string;
  attempts: number;
  started_at: string | null;
  reason: string;
  queue?: JobSummary;
}

/** `loopgate runs`: recent runs, one line each. */
export async function runsCommand(
  io: CommandIO,
  flags: { store?: string; json?: boolean; limit?: number },
): Promise<number> {
  const limit = flags.limit ?? 20;
  const where = storeFrom(flags.store);
  const store = await openStore(where, "read");
  try {
    const all = await store.listStreams({ prefix: "run-" });
    const streams = all.slice(0, limit);
    const queue = await queueState(store);
    const rows: RunRow[] = [];
    // Every submitted run whose run has not started comes first, finished or not (queued work is what a
    // worker picks up next; a job refused before any run would otherwise show nowhere), and a goal's
    // turns while they are not finished.
    const started = new Set(all.map((s) => s.stream.slice(4)));
    for (const j of queue?.jobs ?? [])
      if ((j.run_id === null || !started.has(j.run_id)) && (j.kind === "run" || j.state !== "finished"))
        rows.push({
          run_id: j.run_id,
          task_id: null,
          status: jobStatusWord(j),
          attempts: 0,
          started_at: null,
          reason: "",
          queue: j,
        });
    for (const s of streams) {
      const runId = s.stream.slice(4);
      const events = await store.readStream(s.stream);
      const state = foldRun(events);
      const env = projectEnvelope(runId, events);
      const job = queue?.byRun.get(runId);
      rows.push({
        run_id: runId,
        task_id: state.taskId,
        status: env ? env.status : "RUNNING",
        attempts: state.attempts.length,
        started_at: s.firstAt,
        reason: env ? env.reason : "",
        ...(job ? { queue: job } : {}),
      });
    }
    // The user's own Claude Code sessions its hooks watch, beside the runs: `unverified` when no Stop
    // verification came after the last tool call (core/agent/hook-session-state.ts), with the verify that checks it.
    const sessions = await listHookSessions(store, limit, hintsFor(where));
    // A cut listing says so (on stderr with --json, so the JSON stays an array of rows).
    const cut =
      (all.length > streams.length
        ? `${streams.length} of ${all.length} runs shown (the latest); --limit N shows more\n`
        : "") +
      (sessions.total > sessions.rows.length
        ? `${sessions.rows.length} of ${sessions.total} hook sessions shown (the latest); --limit N shows more\n`
        : "");
    if (flags.json) {
      io.out(`${JSON.stringify([...rows, ...sessions.rows], null, 2)}\n`);
      if (cut) io.err(`loopgate runs: ${cut}`);
    } else if (rows.length === 0 && sessions.rows.length === 0) io.out(`no runs in ${where.label}\n`);
    else {
      for (const r of rows) {
        // A dead-lettered job keeps its line beside its unfinished run: that is where its reason shows.
        const job =
          r.queue && (r.queue.state !== "finished" || r.task_id === null || r.queue.dead_letter)
            ? r.queue
            : null;
        if (r.task_id === null && job)
          io.out(
            `${(r.run_id ?? "(no run yet)").padEnd(22)}  ${r.status.padEnd(12)} ${oneLine(job.task_path)}  ${oneLine(jobLine(job))}\n`,
          );
        else
          io.out(
            `${r.run_id}  ${r.status.padEnd(12)} ${r.task_id}  ${r.attempts} att.  ${oneLine(r.reason)}${job ? `  [${oneLine(jobLine(job))}]` : ""}\n`,
          );
      }
      if (sessions.rows.length) {
        const unverified = sessions.rows.filter((r) => r.state === "unverified").length;
        io.out(
          `${rows.length ? "\n" : ""}hook sessions (Claude Code with loopgate hook install), ${unverified} unverified:\n`,
        );
        for (const r of sessions.rows) io.out(hookSessionLines(r));
      }
      io.out(cut);
    }
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * `loopgate status RUN`: the envelope (or progress so far) of one run. Beside a Postgres store, RUN may
 * be a job id of the run queue (`loopgate submit` prints it): the job's run, or, when it has none, where
 * the job stands (queued, claimed by which worker, until when: exit 3) or what it finished with (a
 * refused job: exit 2); the word printed first and the exit code always agree (job-status.ts).
 */
export async function statusCommand(
  io: CommandIO,
  arg: string,
  flags: { store?: string; json?: boolean },
): Promise<number> {
  const where = storeFrom(flags.store);
  const store = await openStore(where, "read", arg);
  try {
    let runId = arg;
    let job = null;
    if (where.kind === "postgres") {
      job = arg.startsWith("job-")
        ? await queuedJob(store, { jobId: arg })
        : await queuedJob(store, { runId: arg });
      if (job?.run_id && (await store.readStream(RunJournal.stream(job.run_id), { limit: 1 })).length)
        runId = job.run_id;
      else if (job && arg.startsWith("job-")) {
        const word = jobStatusWord(job);
        const finished = job.state === "finished";
        io.out(
          flags.json
            ? `${JSON.stringify({ job_id: job.job_id, status: word, finished, ...(finished ? { reason: job.dead_letter ?? (job.status ?? "").replace(/^[A-Z_]+:\s*/, "") } : {}), queue: job }, null, 2)}\n`
            : `${word} · job ${job.job_id} · ${oneLine(job.task_path)}${finished ? "" : " · not finished"}\nqueue: ${oneLine(jobLine(job))}\n`,
        );
        return jobExitCode(job);
      }
    }
    // Not a run: a hook session, by its id or its stream (claude-session-ID).
    if (!(await store.readStream(RunJournal.stream(runId), { limit: 1 })).length) {
      const session = await findHookSession(store, arg);
      if (session) {
        const hints = hintsFor(where);
        const row = hookSessionRow(session.stream, session.events, hints);
        const { text, exit } = hookSessionStatus(row, hints);
        io.out(flags.json ? `${JSON.stringify(row, null, 2)}\n` : text);
        return exit;
      }
    }
    const events = await readRun(store, where.label, runId);
    const env = projectEnvelope(runId, events);
    if (!env) {
      const state = foldRun(events);
      const info = {
        run_id: runId,
        task_id: state.taskId,
        status: "RUNNING",
        finished: false,
        attempts: state.attempts.length,
      };
      const owner = ownerReport(events, hintCommand(hintsFor(where), `resume ${runId}`));
      io.out(
        flags.json
          ? `${JSON.stringify({ ...info, owner: owner.owner, hint: owner.hint, ...(job ? { queue: job } : {}) }, null, 2)}\n`
          : `RUNNING · run ${runId} · attempt ${info.attempts} · not finished\n${owner.line}\n${job ? `queue: ${oneLine(jobLine(job))}\n` : ""}`,
      );
      return EXIT_NOT_FINISHED;
    }
    // The JSON stays the envelope alone (scripts compare it); people get the job's line under it.
    io.out(
      flags.json
        ? `${JSON.stringify(env, null, 2)}\n`
        : `${formatEnvelope(env, hintsFor(where))}\n${job ? `queue: ${oneLine(jobLine(job))}\n` : ""}`,
    );
    return exitCodeOf(verdict(foldRun(events)).status);
  } finally {
    await store.close();
  }
}

/** `loopgate events RUN`: the audit trail, readable or as JSON lines. */
export async function eventsCommand(
  io: CommandIO,
  runId: string,
  flags: { store?: string; json?: boolean },
): Promise<number> {
  const where = storeFrom(flags.store);
  const store = await openStore(where, "read", runId);
  try {
    // A hook session's stream (by its id or claude-session-ID) prints like a run's.
    const runEvents = await store.readStream(RunJournal.stream(runId));
    const session = runEvents.length ? null : await findHookSession(store, runId);
    // A goal's stream, by its stream name (goal-ID) or the goal's id.
    if (!runEvents.length && !session) {
      const goal = await goalEventsOf(store, runId);
      if (goal) return printGoalEvents(io, goal, flags.json === true);
      if (runId.startsWith("goal-")) throw new GoalNotFoundError(runId.slice("goal-".length), where.label);
    }
    const events = runEvents.length
      ? runEvents
      : (session?.events ?? (await readRun(store, where.label, runId)));
    // The heartbeats stay in the JSON audit trail; the readable listing counts them instead.
    let renewals = 0;
    for (const e of events) {
      if (!flags.json && e.type === "run_lease_renewed") renewals++;
      else io.out(flags.json ? `${JSON.stringify(e)}\n` : `${formatEvent(e)}\n`);
    }
    if (renewals) io.out(`(${renewals} lease renewal(s) not shown; --json lists every event)\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/** A goal's stored events, by its stream name (`goal-ID`) or its id; null when there is no such goal. */
async function goalEventsOf(store: EventStore, arg: string): Promise<RecordedEvent[] | null> {
  for (const stream of arg.startsWith("goal-") ? [arg, goalStream(arg)] : [goalStream(arg)]) {
    const events = await store.readStream(stream);
    if (events.length) return events;
  }
  return null;
}

/** `loopgate events goal-ID`: the goal's stream, one line per event (heartbeats counted), or JSON lines. */
function printGoalEvents(io: CommandIO, events: readonly RecordedEvent[], json: boolean): number {
  let heartbeats = 0;
  for (const e of historyEvents(events)) {
    if (json) io.out(`${JSON.stringify(e)}\n`);
    else if (e.type === "turn_lease_heartbeat") heartbeats++;
    else io.out(`${goalEventLine(e)}\n`);
  }
  if (heartbeats) io.out(`(${heartbeats} turn lease heartbeat(s) not shown; --json lists every event)\n`);
  return 0;
}
