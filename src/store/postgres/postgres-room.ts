// What the CLI uses of the PostgreSQL store, in one module that store/open-store.ts loads with a dynamic
// import() only when a location is `postgres://`: a folder store never loads pg or any file of this room.
export { LogListener } from "./log-listener.js";
export { prunePostgres } from "./pg-prune.js";
export { LOG_NOTIFY_VERSION, PG_SCHEMA_VERSION } from "./pg-schema.js";
export { integrityProblems, PostgresEventStore, PostgresStoreNotFoundError } from "./postgres-event-store.js";
export { QueueListener } from "./queue-listener.js";
export { goalOfJob } from "./run-queue-rows.js";
export { jobSummary, jobView, workerStale } from "./run-queue-view.js";
