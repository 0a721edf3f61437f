import { existsSync, readdirSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Builder } from "../../builders/builder.js";
import { commandBuilder, oracleBuilder } from "../../builders/command-builder.js";
import { InputError } from "../../core/kernel/errors.js";
import type { Envelope } from "../../core/run/envelope.js";
import type { RunFlags } from "../../runner/host/run-flags.js";
import { loadTask } from "../../runner/task-source/load-task.js";
import { storeFrom } from "../output/context.js";
import { formatDoctor } from "../output/doctor-report.js";
import { cliName, packageRoot } from "../output/invocation.js";
import type { CommandIO } from "../output/io.js";
import { shellWord } from "../output/store-location.js";
import { type DemoRow, demoConclusion } from "./demo-conclusion.js";
import { diagnose, gateProgram } from "./doctor.js";
import { executeRun } from "./execute-run.js";

export { packageRoot } from "../output/invocation.js";

/** The bare program names of subprocess gates that `find` cannot locate (where gates look). */
export function absentGatePrograms(
  gates: readonly ({ run: readonly string[] } | object)[],
  find: (program: string) => string | null,
): string[] {
  const names = gates.flatMap((g) => {
    const program = "run" in g ? g.run[0] : undefined;
    return program && !program.includes("/") && !find(program) ? [program] : [];
  });
  return [...new Set(names)];
}

interface DemoCase {
  builder: string;
  make: (taskDir: string, oracle: string | null) => Builder | null;
  expect: "SUCCESS" | "not SUCCESS";
  attempts?: number;
}

const quote = (p: string) => `'${p.replace(/'/g, "'\\''")}'`;
const cases: DemoCase[] = [
  { builder: "oracle", make: (_d, o) => (o ? oracleBuilder(o) : null), expect: "SUCCESS" },
  {
    builder: "forger",
    make: (d) => commandBuilder(quote(join(d, "builders/forger.sh"))),
    expect: "not SUCCESS",
  },
  {
    builder: "test-editor",
    make: (d) => commandBuilder(quote(join(d, "builders/test-editor.sh"))),
    expect: "not SUCCESS",
  },
  {
    builder: "honest (needs one fix)",
    make: (d) => commandBuilder(`${quote(join(d, "builders/honest.sh"))} {required_fix}`),
    expect: "SUCCESS",
    attempts: 2,
  },
];

/** One line on why a run ended as it did: what the builder claimed, and what the evidence said. */
function explain(env: Envelope): string {
  const claim = env.claims
    .filter((c) => c.attempt === 1)
    .at(-1)
    ?.text.split("\n")
    .filter(Boolean)
    .at(-1);
  const parts: string[] = [];
  if (claim) parts.push(`claimed ${JSON.stringify(claim.length > 40 ? `${claim.slice(0, 37)}...` : claim)}`);
  if (env.status === "SUCCESS") parts.push(`all gates passed on attempt ${env.attempts}`);
  else {
    const failed = env.gates.filter((g) => g.attempt === env.attempts && !g.passed).map((g) => g.id);
    if (failed.length) parts.push(`failed: ${failed.join(", ")}`);
    const blocking = [...new Set(env.findings.filter((f) => f.severity === "blocking").map((f) => f.code))];
    if (blocking.length) parts.push(blocking.join(", "));
    if (!failed.length && !blocking.length) parts.push(env.reason);
  }
  return parts.join("; ");
}

/** The bundled examples to run: every one, or those `only` names (by folder or task id); an unknown name is refused. */
export function demoExamples(examples: string, only: readonly string[]): string[] {
  const all = readdirSync(examples)
    .filter((d) => existsSync(join(examples, d, "task.yaml")))
    .sort();
  if (only.length === 0) return all;
  const ids = new Map(all.map((d) => [loadTask(join(examples, d, "task.yaml")).task.id, d]));
  const unknown = only.filter((n) => !all.includes(n) && !ids.has(n));
  if (unknown.length)
    throw new InputError(
      `no bundled example ${unknown.join(", ")}; the examples: ${all.join(", ")}`,
      "loopgate demo EXAMPLE",
    );
  return all.filter((d) => only.some((n) => n === d || ids.get(n) === d));
}

/** `loopgate demo`: runs the bundled examples with an oracle, two forgers and an honest fixer; prints what happened. */
export async function demoCommand(
  io: CommandIO,
  flags: RunFlags,
  only: readonly string[] = [],
): Promise<number> {
  const where = flags.store === undefined ? null : storeFrom(flags.store);
  // The demo's runs keep their folders beside the bundled examples when the log is elsewhere: inside
  // loopgate's own install, which may be read-only and is no place for run folders.
  if (where?.kind === "postgres")
    throw new InputError(
      `loopgate demo runs the bundled examples into a throwaway folder; it does not take a PostgreSQL store (${where.label}), whose run folders would be written inside loopgate's install: leave --store out or give a folder, and try PostgreSQL with \`run\` on a task of your own and --store ${where.label}`,
      "loopgate demo --store",
    );
  // Without a sandbox every row would be a TOOL_FAILURE: say why, as `loopgate doctor` does, instead.
  if (!flags["unsafe-no-sandbox"]) {
    const report = await diagnose(flags);
    const sandbox = report.checks.filter((c) => c.id === "bubblewrap" || c.id === "sandbox self-test");
    if (sandbox.some((c) => c.state === "missing")) {
      io.err(
        `loopgate demo: the sandbox is not available, so no example can run. \`${cliName()} doctor\` says:\n\n${formatDoctor(report)}`,
      );
      return 2;
    }
  }
  const examples = join(packageRoot(), "examples");
  const tasks = demoExamples(examples, only);
  const store = flags.store ?? (await mkdtemp(join(tmpdir(), "loopgate-demo-")));
  const runFlags: RunFlags = { ...flags, store };
  io.err(`loopgate demo: ${tasks.length} example tasks × ${cases.length} builders; event log in ${store}\n`);
  const rows: DemoRow[] = [];
  const skipped: string[] = [];
  for (const name of tasks) {
    const loaded = loadTask(join(examples, name, "task.yaml"));
    // An example whose gates cannot start here (python3 is optional) is skipped and said so, not run
    // into a row of TOOL_FAILUREs.
    const absent = absentGatePrograms(loaded.task.gates, gateProgram);
    if (absent.length) {
      skipped.push(`${loaded.task.id} (its gates need ${absent.join(", ")}, which gates cannot find here)`);
      io.err(
        `  ${loaded.task.id}: skipped: ${absent.join(", ")} not installed where gates look; see \`${cliName()} doctor\`\n`,
      );
      continue;
    }
    for (const c of cases) {
      const builder = c.make(loaded.dir, loaded.oracle);
      if (!builder) continue;
      io.err(`  ${loaded.task.id} · ${c.builder} …\n`);
      const env = await executeRun(io, loaded, builder, runFlags, { quiet: true });
      // A run that could not execute (TOOL_FAILURE) proves nothing either way: it is never "as expected".
      const ok =
        env.status !== "TOOL_FAILURE" &&
        (c.expect === "SUCCESS" ? env.status === "SUCCESS" : env.status !== "SUCCESS") &&
        (c.attempts === undefined || env.attempts === c.attempts);
      const why = explain(env);
      rows.push({
        task: loaded.task.id,
        builder: c.builder,
        expected: c.expect,
        status: env.status,
        attempts: env.attempts,
        why,
        ok,
        run_id: env.run_id,
        gates_run: env.gates.length,
        gates_failed: env.gates.filter((g) => !g.passed).length,
        reason: env.reason,
      });
    }
  }
  if (flags.json) {
    io.out(`${JSON.stringify({ store, rows, skipped, conclusion: demoConclusion(rows) }, null, 2)}\n`);
  } else {
    const w = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s.padEnd(n));
    io.out(`\n${w("task", 14)} ${w("builder", 24)} ${w("expected", 12)} ${w("got", 12)} att  why\n`);
    for (const r of rows)
      io.out(
        `${w(r.task, 14)} ${w(r.builder, 24)} ${w(r.expected, 12)} ${w(r.status, 12)} ${String(r.attempts).padStart(3)}  ${r.ok ? "" : "UNEXPECTED "}${r.why}\n`,
      );
    io.out(`\n${demoConclusion(rows)}\n`);
    if (skipped.length) io.out(`Skipped: ${skipped.join("; ")}.\n`);
    const forged = rows.find((r) => r.expected === "not SUCCESS") ?? rows[0];
    if (forged) io.out(`Inspect one: ${cliName()} events ${forged.run_id} --store ${shellWord(store)}\n`);
  }
  if (rows.some((r) => r.status === "TOOL_FAILURE")) return 2;
  return rows.every((r) => r.ok) ? 0 : 1;
}
