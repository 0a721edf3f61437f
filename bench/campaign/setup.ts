// What a campaign runs on: a copy of the js-slugify example, the built-in agent's script, the stores and
// one uninterrupted reference run per builder kind.
import { randomBytes } from "node:crypto";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { parse, stringify } from "yaml";
import type { BuilderKind, Reference } from "./cycle.js";
import { envelopeOf } from "./envelope.js";
import { loopgate, ROOT } from "./proc.js";
import type { CampaignStore } from "./store-checks.js";

/**
 * The example's task and its two builders. The built-in agent plays honest.yaml with each mutating
 * response after the reading ones (the write_file, then the test run that follows it) given twice, as a
 * model told that its call was interrupted would retry it: then a kill that leaves any of them in doubt
 * (rolled back, reported as interrupted, never re-run by loopgate) still ends with the fixed file tested
 * after the last change, and the uninterrupted envelope is the expected one at every kill point.
 */
export function prepareTask(root: string): { task: string; builderArgs: Record<BuilderKind, string[]> } {
  const dir = join(root, "js-slugify");
  cpSync(join(ROOT, "examples", "js-slugify"), dir, { recursive: true });
  const honest = parse(readFileSync(join(dir, "agent", "honest.yaml"), "utf8")) as {
    text: string;
    tool_calls?: { name: string }[];
  }[];
  const write = honest.findIndex((r) => r.tool_calls?.some((c) => c.name === "write_file"));
  if (write < 0 || write + 1 >= honest.length) throw new Error("honest.yaml has no write_file response");
  const again = (r: (typeof honest)[number]) => [
    r,
    { ...r, text: `${r.text} (once more, in case it was cut off)` },
  ];
  const script = [
    ...honest.slice(0, write),
    ...honest.slice(write, write + 2).flatMap(again),
    ...honest.slice(write + 2),
  ];
  const agent = join(root, "agent-writes-twice.yaml");
  writeFileSync(agent, stringify(script));
  return {
    task: join(dir, "task.yaml"),
    builderArgs: {
      agent: ["--model", `scripted:${agent}`],
      builder: ["--builder", `${join(dir, "builders", "honest.sh")} {required_fix}`],
    },
  };
}

/** An uninterrupted run in `store`: its comparable envelope, own event count and wall time. */
export async function reference(
  store: CampaignStore,
  task: string,
  args: readonly string[],
  comparable: (e: NonNullable<ReturnType<typeof envelopeOf>>) => unknown,
): Promise<Reference> {
  const t0 = Date.now();
  const r = await loopgate(["run", task, ...args, "--store", store.flag, "--json"]).done;
  const ms = Date.now() - t0;
  if (r.code !== 0) throw new Error(`the reference run failed (exit ${r.code}): ${r.stderr.slice(-800)}`);
  const runId = (JSON.parse(r.stdout) as { run_id: string }).run_id;
  const events = await store.readAll();
  const envelope = envelopeOf(runId, events);
  if (!envelope) throw new Error(`reference run ${runId} has no envelope`);
  const ownEvents = events.filter(
    (e) => e.stream === `run-${runId}` && !e.type.startsWith("run_lease_"),
  ).length;
  return { envelope: comparable(envelope), ownEvents, ms };
}

/** The server's maintenance database; the campaign creates its own database there and drops it after. */
export const ADMIN_URL =
  process.env.LOOPGATE_CAMPAIGN_PG ??
  process.env.LOOPGATE_TEST_PG ??
  "postgres://postgres@127.0.0.1:5432/postgres";

export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `loopgate_campaign_${randomBytes(5).toString("hex")}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return { url: u.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
