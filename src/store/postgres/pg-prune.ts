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
 * accounts for every position) and their finished queue jobs (and finished jobs without a run in the log
 * that finished before `jobCutoffMs` ago), then the content only they named: an observation a removed
 * run's events name, the blobs its body names, a removed job's task snapshot and the files its manifest
 * names — unless anything left names it (a remaining event or job, any other observation's body, a
 * remaining job's snapshot) or it was stored or re-used within `graceMs` (then it is kept in `gc_pending`
 * and looked at again by the next gc). Content gc did not see a
 * removed run or job name (a goal repository's records and packs, say) is never removed. References are
 * found conservatively: any 64-hex-digit string counts. One transaction holding the position lock, so
 * no append interleaves; a dry run computes the same and rolls back.
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
      // gc_cand: what the removed runs and jobs named (the only content gc may remove); gc_keep: what
      // anything left names. Content of other kinds (a goal's repository records and packs) is never a
      // candidate, so it stays whatever names it.
      await c.query(
        `CREATE TEMP TABLE gc_cand (hash text PRIMARY KEY) ON COMMIT DROP;
         CREATE TEMP TABLE gc_keep (hash text PRIMARY KEY) ON COMMIT DROP;
         CREATE TEMP TABLE gc_manifest (hash text PRIMARY KEY) ON COMMIT DROP`,
      );
      const into = (table: "gc_cand" | "gc_keep", select: string, params: unknown[] = []) =>
        c.query(`INSERT INTO ${table} ${select} ON CONFLICT DO NOTHING`, params);
      // What an earlier gc spared for its grace period is a candidate again.
      await into("gc_cand", `SELECT hash FROM ${s}.gc_pending`);
      const hexIn = (column: string) => `regexp_matches(${column}, '${HEX64}', 'g') AS m`;
      // A removed job: what its options name is a candidate, its task snapshot's manifest noted apart.
      const snapshotOf = (column: string) => `(regexp_match(${column}, '"task_snapshot":"(${HEX64})"'))[1]`;
      const noteJobs = `cand AS (INSERT INTO gc_cand SELECT DISTINCT m[1] FROM gone, ${hexIn("options")} ON CONFLICT DO NOTHING),
         manifests AS (INSERT INTO gc_manifest SELECT DISTINCT ${snapshotOf("options")} FROM gone
                       WHERE ${snapshotOf("options")} IS NOT NULL ON CONFLICT DO NOTHING)`;
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
        await into("gc_cand", `SELECT DISTINCT m[1] FROM ${s}.events, ${hexIn("data")} WHERE stream = $1`, [
          cand.stream,
        ]);
        await c.query(
          `INSERT INTO ${s}.pruned_streams (stream, events, first_position, last_position) VALUES ($1, $2, $3, $4)
           ON CONFLICT (stream) DO UPDATE SET events = ${s}.pruned_streams.events + EXCLUDED.events,
             last_position = EXCLUDED.last_position, pruned_at = now()`,
          [cand.stream, n, row.first_pos, row.last_pos],
        );
        await c.query(`DELETE FROM ${s}.events WHERE stream = $1`, [cand.stream]);
        await c.query(`DELETE FROM ${s}.streams WHERE stream = $1`, [cand.stream]);
        if (cand.stream.startsWith("run-")) {
          const jobs = await c.query(
            `WITH gone AS (DELETE FROM ${s}.run_queue WHERE state = 'finished' AND run_id = $1 RETURNING options),
             ${noteJobs}
             SELECT count(*) AS n FROM gone`,
            [cand.stream.slice(4)],
          );
          report.jobs += Number(jobs.rows[0]?.n ?? 0);
        }
        report.streams.push({ stream: cand.stream, events: n });
      }
      // A finished run job whose run is not in the log (refused before it started, or its run removed).
      // Jobs of another kind (`job_kind` in their options: a goal's turns) are not gc's to remove.
      const orphans = await c.query(
        `WITH gone AS (
           DELETE FROM ${s}.run_queue q WHERE q.state = 'finished' AND q.options NOT LIKE '%"job_kind":%'
             AND q.finished_at < now() - make_interval(secs => $1::double precision / 1000)
             AND (q.run_id IS NULL OR NOT EXISTS (SELECT 1 FROM ${s}.streams x WHERE x.stream = 'run-' || q.run_id))
           RETURNING options),
         ${noteJobs}
         SELECT count(*) AS n FROM gone`,
        [o.jobCutoffMs],
      );
      report.jobs += Number(orphans.rows[0]?.n ?? 0);
      // What a removed task snapshot's manifest names (its files) are candidates too.
      // (Only manifests, which loopgate wrote as UTF-8 JSON, are read as text.)
      await into(
        "gc_cand",
        `SELECT DISTINCT m[1] FROM ${s}.blobs b, ${hexIn("convert_from(b.content, 'UTF8')")}
         WHERE b.hash IN (SELECT hash FROM gc_manifest)`,
      );
      await into("gc_keep", `SELECT DISTINCT m[1] FROM ${s}.events, ${hexIn("data")}`);
      await into("gc_keep", `SELECT DISTINCT m[1] FROM ${s}.run_queue, ${hexIn("options")}`);
      await into(
        "gc_keep",
        `SELECT DISTINCT m[1] FROM ${s}.blobs b, ${hexIn("convert_from(b.content, 'UTF8')")}
         WHERE b.hash IN (SELECT ${snapshotOf("options")} FROM ${s}.run_queue)`,
      );
      // The observations to remove: named by a removed run, by nothing left, and past the grace period.
      await c.query(
        `CREATE TEMP TABLE gc_obs ON COMMIT DROP AS
         SELECT o.id, o.body FROM ${s}.observations o
         WHERE o.id IN (SELECT hash FROM gc_cand) AND o.id NOT IN (SELECT hash FROM gc_keep)
           AND o.stored_at < now() - make_interval(secs => ${Number(graceSecs)}::double precision)`,
      );
      await into("gc_cand", `SELECT DISTINCT m[1] FROM gc_obs, ${hexIn("body")}`);
      // Every other observation (another run's, a goal repository's record) keeps what its body names
      // (its own id, which a body carries, aside).
      await into(
        "gc_keep",
        `SELECT DISTINCT m[1] FROM ${s}.observations o, ${hexIn("o.body")}
         WHERE o.id NOT IN (SELECT id FROM gc_obs) AND m[1] <> o.id`,
      );
      const obs = await c.query(`DELETE FROM ${s}.observations WHERE id IN (SELECT id FROM gc_obs)`);
      report.observations = obs.rowCount ?? 0;
      const blobs = await c.query(
        `WITH gone AS (
           DELETE FROM ${s}.blobs b WHERE b.hash IN (SELECT hash FROM gc_cand)
             AND b.hash NOT IN (SELECT hash FROM gc_keep)
             AND b.stored_at < now() - make_interval(secs => $1::double precision)
           RETURNING size)
         SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM gone`,
        [graceSecs],
      );
      report.blobs = Number(blobs.rows[0]?.n ?? 0);
      report.blob_bytes = Number(blobs.rows[0]?.bytes ?? 0);
      // Candidates nothing names that are still held were spared for their grace period: the next gc
      // looks at them again (they stay unless named by then).
      await c.query(
        `DELETE FROM ${s}.gc_pending;
         INSERT INTO ${s}.gc_pending (hash)
         SELECT k.hash FROM gc_cand k WHERE k.hash NOT IN (SELECT hash FROM gc_keep)
           AND (EXISTS (SELECT 1 FROM ${s}.blobs b WHERE b.hash = k.hash)
             OR EXISTS (SELECT 1 FROM ${s}.observations o WHERE o.id = k.hash))`,
      );
      await c.query(o.dryRun ? "ROLLBACK" : "COMMIT");
      return report;
    } catch (e) {
      await c.query("ROLLBACK").catch(() => {});
      throw e;
    }
  });
}
