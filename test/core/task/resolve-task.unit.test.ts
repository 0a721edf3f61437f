import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InputError } from "../../../src/core/kernel/errors.js";
import { resolveTask } from "../../../src/core/task/resolve-task.js";
import { parseTask, type Task } from "../../../src/core/task/task.js";
import { loadTask } from "../../../src/runner/task-source/load-task.js";

// The expected values are the documented ones (docs/reference/task-file.md, "Fields"; the limits'
// table in docs/explanation/sandbox.md), written out here, never read from the code under test.
const MIN = 60_000;
const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const DOCUMENTED = {
  builder: { timeoutMs: 10 * MIN }, // builder.timeout: default `10m`
  limits: {
    files: 50_000,
    totalBytes: 1 * GiB,
    fileBytes: 256 * MiB,
    processes: 1024,
    fileSize: 1 * GiB,
    memory: 4 * GiB,
  },
  wallTimeMs: null, // budget.wall_time: no default, no cap
  judgeTimeoutMs: null, // no judge
};

const minimal = `id: t
prompt: p
workspace: ./repo
gates: [{ id: g, run: ["true"] }]
`;
const parsed = (extra = "") => parseTask(`${minimal}${extra}`, "task.yaml");

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});
/** A task file on disk with its workspace, for loadTask. */
function taskFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "lg-resolve-"));
  temps.push(dir);
  mkdirSync(join(dir, "repo"));
  writeFileSync(join(dir, "task.yaml"), text);
  return join(dir, "task.yaml");
}

describe("resolveTask: each default applied once, as documented", () => {
  it("a task that sets nothing gets the documented builder timeout and limits, and no wall time or judge", () => {
    expect(resolveTask(parsed(), "task.yaml")).toEqual(DOCUMENTED);
  });

  it("a task that states every default explicitly resolves the same as one that states none", () => {
    const explicit = parsed(`builder: { timeout: 10m, network: false }
budget: { attempts: 3, turns: 20, steps_per_turn: 50 }
limits: { files: 50000, total_bytes: 1GiB, file_bytes: 256MiB, processes: 1024, file_size: 1GiB, memory: 4GiB }
`);
    expect(resolveTask(explicit, "task.yaml")).toEqual(DOCUMENTED);
    expect(explicit.budget).toEqual(parsed().budget);
  });

  it("the budget's documented defaults hold whether the budget is absent, empty or partly given", () => {
    const documented = { attempts: 3, turns: 20, steps_per_turn: 50 };
    expect(parsed().budget).toEqual(documented);
    expect(parsed("budget: {}\n").budget).toEqual(documented);
    expect(parsed("budget: { turns: 5 }\n").budget).toEqual({ ...documented, turns: 5 });
  });

  it("builder given in part still gets the documented timeout", () => {
    const t = parsed("builder: { network: true }\n");
    expect(t.builder).toEqual({ timeout: "10m", network: true });
    expect(resolveTask(t, "task.yaml").builder.timeoutMs).toBe(10 * MIN);
  });

  it("a judge without a timeout gets the documented 120s", () => {
    const t = parsed('judge: { rules: ["be nice"] }\n');
    expect(resolveTask(t, "task.yaml").judgeTimeoutMs).toBe(120_000);
  });

  it("each value given replaces its default alone, converted once (units, bare seconds, binary sizes)", () => {
    const t = parsed(`builder: { timeout: 90 }
budget: { wall_time: 2h }
judge: { rules: ["r"], timeout: 1500ms }
limits: { memory: 512MiB, files: 10 }
`);
    expect(resolveTask(t, "task.yaml")).toEqual({
      builder: { timeoutMs: 90_000 },
      limits: { ...DOCUMENTED.limits, memory: 512 * MiB, files: 10 },
      wallTimeMs: 2 * 60 * MIN,
      judgeTimeoutMs: 1500,
    });
  });

  it("loadTask resolves once, at load, and keeps the result beside the task", () => {
    const loaded = loadTask(taskFile(`${minimal}builder: { timeout: 5m }\n`));
    expect(loaded.resolved).toEqual({ ...DOCUMENTED, builder: { timeoutMs: 5 * MIN } });
  });
});

describe("bad values are refused, naming the file and the field", () => {
  it.each([
    ["builder: { timeout: soon }\n", /task\.yaml:5: builder\.timeout: expected a duration such as "30s"/],
    ["builder: { timeout: 400d }\n", /task\.yaml:5: builder\.timeout: expected a duration of at most 365d/],
    ["budget: { wall_time: 0s }\n", /task\.yaml:5: budget\.wall_time: expected a duration such as/],
    ["limits: { memory: lots }\n", /task\.yaml:5: limits\.memory: expected a size such as "256MiB"/],
  ])("at load: %s", (extra, message) => {
    const file = taskFile(`${minimal}${extra}`);
    expect(() => loadTask(file)).toThrow(InputError);
    expect(() => loadTask(file)).toThrow(message);
  });

  // A task made another way than from its file (the schema would have refused these first).
  const judged = parsed('judge: { rules: ["r"] }\n');
  it.each([
    [
      "builder.timeout",
      { builder: { ...judged.builder, timeout: "soon" } },
      /^task\.yaml: builder\.timeout: /,
    ],
    [
      "budget.wall_time",
      { budget: { ...judged.budget, wall_time: "-1s" } },
      /^task\.yaml: budget\.wall_time: /,
    ],
    ["judge.timeout", { judge: { rules: ["r"], timeout: "1y" } }, /^task\.yaml: judge\.timeout: /],
    [
      "limits.file_bytes",
      { limits: { file_bytes: "huge" } },
      /^task\.yaml: limits\.file_bytes: expected a size/,
    ],
  ] as [string, Partial<Task>, RegExp][])(
    "by the resolver: %s is never replaced by its default",
    (_field, patch, message) => {
      expect(() => resolveTask({ ...judged, ...patch }, "task.yaml")).toThrow(message);
    },
  );
});

describe("one resolver", () => {
  /** Every .ts file under src/. */
  const sources = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => {
      const p = join(dir, n);
      return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
    });

  it("no module outside the resolver fills in limits or parses the builder's timeout itself", () => {
    const offenders = sources("src").filter((p) => {
      if (
        p === join("src", "core", "task", "resolve-task.ts") ||
        p === join("src", "core", "task", "limits.ts")
      )
        return false;
      const text = readFileSync(p, "utf8");
      return /resolveLimits\(/.test(text) || /builder\.timeout\)/.test(text);
    });
    expect(offenders).toEqual([]);
  });
});
