import { projectEnvelope } from "../../core/envelope.js";
import { foldRun, verdict } from "../../core/run-decider.js";
import { openStore, readRun, storeFrom } from "../context.js";
import { oneLine } from "../excerpt.js";
import { EXIT_NOT_FINISHED, exitCodeOf } from "../exit-codes.js";
import { formatEnvelope, formatEvent } from "../format.js";
import type { CommandIO } from "../io.js";
import { ownerReport } from "../run-owner.js";

/** `loopgate runs`: recent runs, one line each. */
export async function runsCommand(
  io: CommandIO,
  flags: { store?: string; json?: boolean; limit?: number },
): Promise<number> {
  const limit = flags.limit ?? 20;
  const where = storeFrom(flags.store, ".loopgate");
  const store = await openStore(where, "read");
  try {
    const all = await store.listStreams({ prefix: "run-" });
    const streams = all.slice(0, limit);
    const rows = [];
    for (const s of streams) {
      const runId = s.stream.slice(4);
      const events = await store.readStream(s.stream);
      const state = foldRun(events);
      const env = projectEnvelope(runId, events);
      rows.push({
        run_id: runId,
        task_id: state.taskId,
        status: env ? env.status : "RUNNING",
        attempts: state.attempts.length,
        started_at: s.firstAt,
        reason: env ? env.reason : "",
      });
    }
    // A cut listing says so (on stderr with --json, so the JSON stays an array of rows).
    const cut =
      all.length > rows.length
        ? `${rows.length} of ${all.length} runs shown (the latest); --limit N shows more\n`
        : "";
    if (flags.json) {
      io.out(`${JSON.stringify(rows, null, 2)}\n`);
      if (cut) io.err(`loopgate runs: ${cut}`);
    } else if (rows.length === 0) io.out(`no runs in ${where.label}\n`);
    else {
      for (const r of rows)
        io.out(
          `${r.run_id}  ${r.status.padEnd(12)} ${r.task_id}  ${r.attempts} att.  ${oneLine(r.reason)}\n`,
        );
      io.out(cut);
    }
    return 0;
  } finally {
    await store.close();
  }
}

/** `loopgate status RUN`: the envelope (or progress so far) of one run. */
export async function statusCommand(
  io: CommandIO,
  runId: string,
  flags: { store?: string; json?: boolean },
): Promise<number> {
  const where = storeFrom(flags.store, ".loopgate");
  const store = await openStore(where, "read", runId);
  try {
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
      const owner = ownerReport(runId, events, where.label);
      io.out(
        flags.json
          ? `${JSON.stringify({ ...info, owner: owner.owner, hint: owner.hint }, null, 2)}\n`
          : `RUNNING · run ${runId} · attempt ${info.attempts} · not finished\n${owner.line}\n`,
      );
      return EXIT_NOT_FINISHED;
    }
    io.out(flags.json ? `${JSON.stringify(env, null, 2)}\n` : `${formatEnvelope(env)}\n`);
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
  const where = storeFrom(flags.store, ".loopgate");
  const store = await openStore(where, "read", runId);
  try {
    const events = await readRun(store, where.label, runId);
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
