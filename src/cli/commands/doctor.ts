import { accessSync, constants, existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { findBwrap, sandboxSelfTest } from "../../sandbox/bubblewrap.js";
import { resolveProgram, SANDBOX_PATH } from "../../sandbox/environment.js";
import { privilegeSummary, sandboxUser } from "../../sandbox/sandbox-user.js";
import { seccompProgram, seccompSummary } from "../../sandbox/seccomp.js";
import {
  inspectStoreFolder,
  type PostgresEventStore,
  postgresRoom,
  StoreError,
  sqliteRoom,
} from "../../store/open-store.js";
import { chooseWorkspaceMode } from "../../workspace/overlay-workspace.js";
import { openStore, storeFrom } from "../output/context.js";
import {
  type DoctorFacts,
  type DoctorReport,
  doctorChecks,
  doctorReport,
  formatDoctor,
} from "../output/doctor-report.js";
import type { CommandIO } from "../output/io.js";

/** Whether loopgate could create or write its event log in `dir` (nothing is created to find out). */
function storeWritable(dir: string): DoctorFacts["store"] {
  let probe = dir;
  while (!existsSync(probe) && dirname(probe) !== probe) probe = dirname(probe);
  try {
    if (!statSync(probe).isDirectory())
      return { dir, writable: false, detail: `${probe} exists and is not a folder` };
    accessSync(probe, constants.W_OK | constants.X_OK);
    return { dir, writable: true, detail: `${probe} is writable` };
  } catch (e) {
    return { dir, writable: false, detail: `${probe} is not writable: ${(e as Error).message}` };
  }
}

/**
 * A folder store's log as `runs` sees it (the folder's own refusals, the log opened read-only with its
 * schema version checked), then SQLite's quick_check over every page. Null when there is no log yet;
 * undefined when the folder itself cannot be one (the store check says why).
 */
async function probeFolderLog(dir: string, storeFlagged: boolean): Promise<DoctorFacts["store"]["log"]> {
  const log = join(dir, "events.db");
  try {
    if (!inspectStoreFolder(dir, false).hasLog) return null;
    const store = await openStore(dir, "read");
    await store.close();
  } catch (e) {
    // The folder itself is unusable (a file, or a file on the way): the store check names that already.
    if (storeFlagged && e instanceof StoreError && e.path === dir) return undefined;
    // What `runs` would refuse (a corrupted header, a log missing beside run folders, a newer schema).
    return { path: log, problems: [e instanceof Error ? e.message : String(e)] };
  }
  const { sqliteIntegrityProblems } = await sqliteRoom();
  return { path: log, problems: sqliteIntegrityProblems(log) };
}

/** A folder store: whether it can be written, and its log's soundness. */
async function probeFolder(dir: string): Promise<DoctorFacts["store"]> {
  const store = storeWritable(dir);
  return { ...store, log: await probeFolderLog(dir, !store.writable) };
}

/** Opens a Postgres store read-only (nothing is created or migrated) and reads its version and integrity. */
async function probePostgres(url: string, label: string): Promise<NonNullable<DoctorFacts["postgres"]>> {
  const { integrityProblems, PG_SCHEMA_VERSION, PostgresEventStore, PostgresStoreNotFoundError } =
    await postgresRoom();
  const facts = { label, expected: PG_SCHEMA_VERSION, error: null, problems: null };
  let store: PostgresEventStore;
  try {
    store = await PostgresEventStore.open(url, { readonly: true, connectTimeoutMs: 5000 });
  } catch (e) {
    if (e instanceof PostgresStoreNotFoundError) return { ...facts, version: 0 };
    return { ...facts, version: null, error: e instanceof Error ? e.message : String(e) };
  }
  try {
    const version = await store.version();
    const problems = version === PG_SCHEMA_VERSION ? await integrityProblems(store) : null;
    return { ...facts, version, problems };
  } catch (e) {
    return { ...facts, version: null, error: e instanceof Error ? e.message : String(e) };
  } finally {
    await store.close().catch(() => {});
  }
}

/** Where a gate would find `name` (the sandbox's PATH, under a directory the gate sandbox mounts), or null. */
export function gateProgram(name: string): string | null {
  const at = resolveProgram(name, "/", SANDBOX_PATH);
  return at && GATE_VISIBLE.some((d) => at.startsWith(d)) ? at : null;
}

const GATE_VISIBLE = ["/usr/", "/bin/", "/sbin/"];

/** Who loopgate runs as, and who sandboxed code then runs as. */
function probePrivileges(): NonNullable<DoctorFacts["privileges"]> {
  const caller = process.geteuid?.() ?? -1;
  try {
    return { detail: privilegeSummary(sandboxUser(), caller), error: null };
  } catch (e) {
    return { detail: "", error: e instanceof Error ? e.message : String(e) };
  }
}

/** Which workspace runs under this store use (a copy, or an overlay on the shared snapshot) and why. */
function probeWorkspace(localDir: string): NonNullable<DoctorFacts["workspace"]> {
  try {
    return { ...chooseWorkspaceMode(join(localDir, "runs"), process.env, true), error: null };
  } catch (e) {
    return { mode: "none", why: "", error: e instanceof Error ? e.message : String(e) };
  }
}

/** Probes this machine: programs on PATH, the sandbox self-test, the store, provider settings. */
export async function probeDoctor(flags: { store?: string } = {}): Promise<DoctorFacts> {
  const where = storeFrom(flags.store);
  const path = process.env.PATH ?? "";
  const find = (p: string) => resolveProgram(p, process.cwd(), path);
  const bwrap = findBwrap();
  let selfTest: string | null | undefined;
  if (bwrap)
    selfTest = await sandboxSelfTest().then(
      () => null,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
  return {
    nodeVersion: process.versions.node,
    programs: {
      bwrap,
      git: find("git"),
      claude: find("claude"),
      codex: find("codex"),
    },
    gatePrograms: { node: gateProgram("node"), python3: gateProgram("python3") },
    sandboxSelfTest: selfTest,
    privileges: probePrivileges(),
    ...(where.kind === "folder" ? { workspace: probeWorkspace(where.dir) } : {}),
    seccomp: { available: seccompProgram() !== null, detail: seccompSummary() },
    store: where.kind === "folder" ? await probeFolder(where.dir) : storeWritable(where.dir),
    ...(where.kind === "postgres" ? { postgres: await probePostgres(where.url, where.label) } : {}),
    env: {
      ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY,
      OPENAI_API_KEY: process.env.OPENAI_API_KEY,
      LOOPGATE_OPENAI_COMPATIBLE_BASE_URL: process.env.LOOPGATE_OPENAI_COMPATIBLE_BASE_URL,
    },
  };
}

/** This machine's doctor report. */
export async function diagnose(flags: { store?: string } = {}): Promise<DoctorReport> {
  return doctorReport(doctorChecks(await probeDoctor(flags)));
}

/** `loopgate doctor [--json] [--store DIR]`: every check loopgate relies on, each with its remedy. */
export async function doctorCommand(
  io: CommandIO,
  flags: { json?: boolean; store?: string },
): Promise<number> {
  const report = await diagnose(flags);
  io.out(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctor(report));
  return report.exit;
}
