import type { PostgresEventStore } from "./postgres-event-store.js";

/**
 * Content stored or re-used this recently is never removed by `gc`: a run that has just written an
 * observation's blobs names them in its next append, and until then no event references them.
 * (missingBlobs and putObservation renew stored_at of what they find, so re-used content counts as new.)
 */
export const CONTENT_GRACE_MS = 10 * 60_000;

/** A stream `gc` may remove: its last revision as planned, so one that moved on since is left alone. */
export interface PruneCandidate {
  stream: string;
  lastRevision: number;
}

/** What removing streams from a Postgres store did (or, in a dry run, would do). */
export interface PgPruneReport {
  streams: { stream: string; events: number }[];
  /** Candidates left alone, with the reason (they got a new event since they were planned). */
  skipped: { stream: string; why: string }[];
  /** Finished queue jobs removed with their run (or, without a run, finished before the cutoff). */
  jobs: number;
  observations: number;
  blobs: number;
  blob_bytes: number;
}

const HEX64 = "[0-9a-f]{64}";

/**
 * Removes `candidates`' events (recording each stream in `pruned_streams`, so the integrity check still
 * accounts for every position), their finished queue jobs, and then every observation and blob no
 * remaining event, job or task snapshot names and that is older than `graceMs`. References are found
 * conservatively: any 64-hex-digit string in a remaining event's data or a job's options keeps the
 * observation or blob of that key, an observation kept keeps every blob its body names, a job's task
 * snapshot keeps every blob its manifest names. One transaction holding the position lock, so no append
 * interleaves; a dry run computes the same and rolls back.
 */
export async function prunePostgres(
  store: PostgresEventStore,
  o: { candidates: readonly PruneCandidate[]; dryRun: boolean; jobCutoffMs: number; graceMs?: number },
): Promise<PgPruneReport> {
  const s = store.pgSchema;
  const graceSecs = (o.graceMs ?? CONTENT_GRACE_MS) / 1000;
  const report: PgPruneReport = {
    streams: [],
    skipped: [],
    jobs: 0,
    observations: 0,
    blobs: 0,
    blob_bytes: 0,
  };
  return store.withClient(async (c) => {
    await c.query(`BEGIN; SELECT last_position FROM ${s}.log_head WHERE one FOR UPDATE`);
    try {
      for (const cand of o.candidates) {
        const r = await c.query(
          `SELECT count(*) AS n, max(revision) AS last, min(position) AS first_pos, max(position) AS last_pos
           FROM ${s}.events WHERE stream = $1`,
          [cand.stream],
        );
        const row = r.rows[0] as { n: string; last: number | null; first_pos: string; last_pos: string };
        const n = Number(row.n);
        if (n === 0) continue;
        if (Number(row.last) !== cand.lastRevision) {
          report.skipped.push({
            stream: cand.stream,
            why: `it has new events since gc looked (revision ${row.last})`,
          });
          continue;
        }
        await c.query(
          `INSERT INTO ${s}.pruned_streams (stream, events, first_position, last_position) VALUES ($1, $2, $3, $4)
           ON CONFLICT (stream) DO UPDATE SET events = ${s}.pruned_streams.events + EXCLUDED.events,
             last_position = EXCLUDED.last_position, pruned_at = now()`,
          [cand.stream, n, row.first_pos, row.last_pos],
        );
        await c.query(`DELETE FROM ${s}.events WHERE stream = $1`, [cand.stream]);
        await c.query(`DELETE FROM ${s}.streams WHERE stream = $1`, [cand.stream]);
        if (cand.stream.startsWith("run-")) {
          const jobs = await c.query(`DELETE FROM ${s}.run_queue WHERE state = 'finished' AND run_id = $1`, [
            cand.stream.slice(4),
          ]);
          report.jobs += jobs.rowCount ?? 0;
        }
        report.streams.push({ stream: cand.stream, events: n });
      }
      // A finished job whose run is not in the log (refused before it started, or its run removed).
      const orphans = await c.query(
        `DELETE FROM ${s}.run_queue q WHERE q.state = 'finished'
           AND q.finished_at < now() - make_interval(secs => $1::double precision / 1000)
           AND (q.run_id IS NULL OR NOT EXISTS (SELECT 1 FROM ${s}.streams x WHERE x.stream = 'run-' || q.run_id))`,
        [o.jobCutoffMs],
      );
      report.jobs += orphans.rowCount ?? 0;
      await c.query(`CREATE TEMP TABLE gc_keep (hash text PRIMARY KEY) ON COMMIT DROP`);
      const keep = (select: string) => c.query(`INSERT INTO gc_keep ${select} ON CONFLICT DO NOTHING`);
      await keep(`SELECT DISTINCT m[1] FROM ${s}.events, regexp_matches(data, '${HEX64}', 'g') AS m`);
      await keep(`SELECT DISTINCT m[1] FROM ${s}.run_queue, regexp_matches(options, '${HEX64}', 'g') AS m`);
      await keep(
        `SELECT DISTINCT m[1] FROM ${s}.observations o, regexp_matches(o.body, '${HEX64}', 'g') AS m
         WHERE EXISTS (SELECT 1 FROM gc_keep k WHERE k.hash = o.id)`,
      );
      await keep(
        `SELECT DISTINCT m[1] FROM ${s}.blobs b, regexp_matches(convert_from(b.content, 'UTF8'), '${HEX64}', 'g') AS m
         WHERE b.hash IN (SELECT (regexp_match(options, '"task_snapshot":"(${HEX64})"'))[1] FROM ${s}.run_queue)`,
      );
      const obs = await c.query(
        `DELETE FROM ${s}.observations o WHERE NOT EXISTS (SELECT 1 FROM gc_keep k WHERE k.hash = o.id)
           AND o.stored_at < now() - make_interval(secs => $1::double precision)`,
        [graceSecs],
      );
      report.observations = obs.rowCount ?? 0;
      const blobs = await c.query(
        `WITH gone AS (
           DELETE FROM ${s}.blobs b WHERE NOT EXISTS (SELECT 1 FROM gc_keep k WHERE k.hash = b.hash)
             AND b.stored_at < now() - make_interval(secs => $1::double precision)
           RETURNING size)
         SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM gone`,
        [graceSecs],
      );
      report.blobs = Number(blobs.rows[0]?.n ?? 0);
      report.blob_bytes = Number(blobs.rows[0]?.bytes ?? 0);
      await c.query(o.dryRun ? "ROLLBACK" : "COMMIT");
      return report;
    } catch (e) {
      await c.query("ROLLBACK").catch(() => {});
      throw e;
    }
  });
}
