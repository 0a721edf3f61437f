import { projectEnvelope } from "../core/run/envelope.js";
import { foldRun } from "../core/run/run-decider.js";
import type { EventStore } from "../store/kernel/event-store.js";
import type { JobSummary } from "../store/open-store.js";
import type { BoardReaders } from "./board-readers.js";
import { age, clip, type Html, html, when } from "./html.js";

/** The runs page's filters, from its query string. */
export interface RunsFilter {
  status: string | null;
  task: string | null;
  limit: number;
}

/** The most runs one page lists (`?limit=`), and the default. */
export const RUNS_LIMIT = { max: 5000, default: 500 };

/** One row of the runs page: a run, or a queued job whose run has not started. */
export interface RunRow {
  runId: string | null;
  taskId: string | null;
  builder: string;
  status: string;
  attempts: number;
  startedAt: string | null;
  reason: string;
  queue: string | null;
}

/** The filters of a query string; a bad limit is refused with what it must be. */
export function runsFilter(q: { status?: string; task?: string; limit?: string }): RunsFilter {
  const limit = q.limit === undefined || q.limit === "" ? RUNS_LIMIT.default : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > RUNS_LIMIT.max)
    throw new RangeError(
      `limit must be a whole number from 1 to ${RUNS_LIMIT.max}, not ${JSON.stringify(q.limit)}`,
    );
  return { status: q.status?.trim() || null, task: q.task?.trim() || null, limit };
}

/**
 * The rows `loopgate runs` lists, newest first: every run's status from its envelope (RUNNING while it has
 * none), and beside a PostgreSQL store the jobs whose run has not started. Filtered by status and task.
 */
export async function readRuns(
  store: EventStore,
  readers: BoardReaders,
  filter: RunsFilter,
): Promise<{ rows: RunRow[]; total: number; cut: number; queue: JobSummary[] | null }> {
  const streams = await store.listStreams({ prefix: "run-" });
  const queue = await readers.queue(store);
  const rows: RunRow[] = [];
  const started = new Set(streams.map((s) => s.stream.slice(4)));
  for (const j of queue?.jobs ?? [])
    if ((j.run_id === null || !started.has(j.run_id)) && (j.kind === "run" || j.state !== "finished"))
      rows.push({
        runId: j.run_id,
        taskId: null,
        builder: "",
        status: readers.jobWord(j),
        attempts: 0,
        startedAt: j.submitted_at,
        reason: "",
        queue: readers.jobLine(j),
      });
  const keep = (r: Pick<RunRow, "status" | "taskId">) =>
    (filter.status === null || r.status === filter.status) &&
    (filter.task === null || (r.taskId ?? "").includes(filter.task));
  let matched = rows.filter(keep).length;
  const out = rows.filter(keep);
  const unfiltered = filter.status === null && filter.task === null;
  for (const s of streams) {
    // Past a full page only the count is needed: without a filter the listing gives it.
    if (unfiltered && out.length >= filter.limit) {
      matched++;
      continue;
    }
    if (filter.task !== null) {
      const [first] = await store.readStream(s.stream, { limit: 1 });
      if (!(first?.type === "run_started" && first.data.task_id.includes(filter.task))) continue;
    }
    const runId = s.stream.slice(4);
    const events = await store.readStream(s.stream);
    // The envelope is projected from the run's fold; only an unfinished run is folded again for its state.
    const env = projectEnvelope(runId, events);
    const state = env ? { taskId: env.task_id, attempts: { length: env.attempts } } : foldRun(events);
    const first = events[0];
    const builder =
      first?.type === "run_started"
        ? `${first.data.builder.kind}${first.data.builder.command ? ` ${first.data.builder.command}` : ""}`
        : "";
    const job = queue?.byRun.get(runId);
    const row: RunRow = {
      runId,
      taskId: state.taskId,
      builder,
      status: env ? env.status : "RUNNING",
      attempts: state.attempts.length,
      startedAt: s.firstAt,
      reason: env ? env.reason : "",
      queue: job ? readers.jobLine(job) : null,
    };
    if (!keep(row)) continue;
    matched++;
    if (out.length < filter.limit) out.push(row);
  }
  return { rows: out, total: matched, cut: matched - out.length, queue: queue?.jobs ?? null };
}

const STATUSES = ["SUCCESS", "ESCALATED", "TOOL_FAILURE", "RUNNING", "QUEUED", "CLAIMED", "EXPIRED"];

/** The runs page's content. */
export function runsMain(
  r: { rows: RunRow[]; total: number; cut: number; queue: JobSummary[] | null },
  filter: RunsFilter,
  now: Date,
): Html {
  const options = STATUSES.map(
    (s) => html`<option value="${s}"${filter.status === s ? " selected" : ""}>${s}</option>`,
  );
  return html`<h1>Runs</h1>
<form class="filters" method="get" action="/">
<label>status <select name="status"><option value="">any</option>${options}</select></label>
<label>task <input type="text" name="task" value="${filter.task ?? ""}" placeholder="task id contains"></label>
<button type="submit">filter</button>${filter.status || filter.task ? html` <a href="/">clear</a>` : ""}
</form>
${r.queue ? html`<p class="small muted">PostgreSQL run queue: ${r.queue.filter((j) => j.state === "queued").length} queued, ${r.queue.filter((j) => j.state === "claimed" || j.state === "running").length} held by workers, ${r.queue.filter((j) => j.worker_stale).length} held by a stale worker.</p>` : ""}
${
  r.rows.length === 0
    ? html`<p class="muted">No runs${filter.status || filter.task ? " match these filters" : " in this store yet"}.</p>`
    : html`<table class="runs"><tr><th>run</th><th>task</th><th>builder</th><th>status</th><th>attempts</th><th>age</th><th>reason</th></tr>
${r.rows.map(
  (
    row,
  ) => html`<tr><td>${row.runId ? html`<a href="/runs/${encodeURIComponent(row.runId)}"><code>${row.runId}</code></a>` : html`<span class="muted">(no run yet)</span>`}</td>
<td>${row.taskId ?? ""}</td><td class="small"><code>${clip(row.builder, 80)}</code></td><td><span class="badge ${row.status}">${row.status}</span></td>
<td>${row.attempts || ""}</td><td title="${when(row.startedAt)}">${age(row.startedAt, now)}</td>
<td class="small">${clip(row.reason, 200)}${row.queue ? html`<br><span class="muted">queue: ${row.queue}</span>` : ""}</td></tr>`,
)}</table>`
}
${r.cut ? html`<p class="muted">${r.rows.length} of ${r.total} shown (the latest); <a href="?${new URLSearchParams({ ...(filter.status ? { status: filter.status } : {}), ...(filter.task ? { task: filter.task } : {}), limit: String(Math.min(RUNS_LIMIT.max, filter.limit * 2)) }).toString()}">show more</a></p>` : ""}`;
}
