import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { exampleTask, loopgate, parseStdout, removeTemps, show, tempDir, withoutCanaryNames } from "./cli.js";

// A crash right after a todo call's result, before its todo_written: the resumed run records the same
// plan write, so the log matches an uninterrupted run apart from the resume event.
afterAll(removeTemps);
type Ev = { type: string; data: Record<string, unknown>; meta: { origin: string } };

const script = [
  {
    text: "Plan first.",
    tool_calls: [
      {
        name: "todo",
        args: {
          items: [
            { content: "Read slugify", status: "in_progress" },
            { content: "Fix it", status: "pending" },
          ],
        },
      },
    ],
  },
  { text: "Reading.", tool_calls: [{ name: "read_file", args: { path: "src/slugify.js" } }] },
  {
    text: "Step done.",
    tool_calls: [
      {
        name: "todo",
        args: {
          items: [
            { content: "Read slugify", status: "completed" },
            { content: "Fix it", status: "in_progress" },
          ],
        },
      },
    ],
  },
  { text: "Stopping here." },
  { text: "Still stopping." },
  { text: "Done." },
];

async function events(store: string, runId: string): Promise<Ev[]> {
  const r = await loopgate(["events", runId, "--store", store, "--json"]);
  return r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Ev)
    .filter((e) => !e.type.startsWith("run_lease_")); // who held the run, not what it did
}
const normalize = (es: Ev[]) =>
  es
    .filter((e) => e.type !== "run_resumed")
    .map((e) => ({
      type: e.type,
      data: withoutCanaryNames(
        Object.fromEntries(
          Object.entries(e.data).filter(
            ([k]) => !["duration_ms", "content", "log_excerpt", "run_dir"].includes(k),
          ),
        ),
      ),
    }));

describe("resume around a todo write", () => {
  it("a crash between a todo result and its todo_written resumes to the same log", async () => {
    const dir = tempDir();
    const file = join(dir, "plan.yaml");
    writeFileSync(file, stringify(script));
    const args = (store: string) => [
      "run",
      exampleTask("js-slugify"),
      "--model",
      `scripted:${file}`,
      "--store",
      store,
      "--max-attempts",
      "1",
      "--json",
    ];
    const refStore = join(dir, "ref");
    const ref = await loopgate(args(refStore));
    const refId = parseStdout<{ run_id: string }>(ref).run_id;
    const refEvents = await events(refStore, refId);
    const at = refEvents.findIndex((e) => e.type === "tool_call_finished" && e.data.name === "todo");
    expect(refEvents[at + 1]?.type, show(ref)).toBe("todo_written");
    const store = join(dir, "crash");
    const killed = await loopgate(args(store), { env: { LOOPGATE_FAULT_KILL_AFTER_EVENTS: String(at + 1) } });
    expect(killed.signal).toBe("SIGKILL");
    const runs = parseStdout<{ run_id: string }[]>(await loopgate(["runs", "--store", store, "--json"]));
    const runId = runs[0]?.run_id ?? "";
    expect((await events(store, runId)).at(-1)?.type).toBe("tool_call_finished");
    const resumed = await loopgate(["resume", runId, "--store", store, "--json"]);
    expect(parseStdout<{ status: string }>(resumed).status).toBe(parseStdout<{ status: string }>(ref).status);
    expect(normalize(await events(store, runId))).toEqual(normalize(refEvents));
  });
});
