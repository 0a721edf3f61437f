// What the CLI uses of the SQLite store, in one module that store/open-store.ts loads with a dynamic import()
// when a folder store is first opened or checked: commands that open no store (help, version) and
// commands on a postgres:// store never load better-sqlite3 and its native module.
export { SqliteEventStore } from "./sqlite-event-store.js";
export { sqliteIntegrityProblems } from "./sqlite-integrity.js";
