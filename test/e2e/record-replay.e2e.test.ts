import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exampleDir, exampleTask, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

type Env = { run_id: string; status: string; attempts: number; gates: { id: string; passed: boolean }[] };

async function modelResponses(store: string, runId: string): Promise<unknown[]> {
  const r = await loopgate(["events", runId, "--store", store, "--json"]);
  return r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> })
    .filter((e) => e.type === "model_responded")
    .map((e) => e.data);
}

describe("--record and --model replay", () => {
  it("a recorded session replays to the same responses and the same verdict", async () => {
    const dir = tempDir();
    const file = join(dir, "session.yaml");
    const first = await loopgate([
      "run",
      exampleTask("js-slugify"),
      "--model",
      `scripted:${join(exampleDir("js-slugify"), "agent/honest.yaml")}`,
      "--record",
      file,
      "--store",
      join(dir, "a"),
      "--json",
    ]);
    expect(first.code, show(first)).toBe(0);
    const second = await loopgate([
      "run",
      exampleTask("js-slugify"),
      "--model",
      `replay:${file}`,
      "--store",
      join(dir, "b"),
      "--json",
    ]);
    expect(second.code, show(second)).toBe(0);
    const a = parseStdout<Env>(first);
    const b = parseStdout<Env>(second);
    expect(b.status).toBe(a.status);
    expect(b.gates.map((g) => [g.id, g.passed])).toEqual(a.gates.map((g) => [g.id, g.passed]));
    const ra = await modelResponses(join(dir, "a"), a.run_id);
    expect(ra.length).toBeGreaterThan(1);
    expect(await modelResponses(join(dir, "b"), b.run_id)).toEqual(ra);
  });

  it("the bundled recorded session replays from the README's command", async () => {
    const r = await loopgate([
      "run",
      exampleTask("js-slugify"),
      "--model",
      `replay:${join(exampleDir("js-slugify"), "agent/recorded-session.yaml")}`,
      "--store",
      tempDir(),
      "--json",
    ]);
    expect(r.code, show(r)).toBe(0);
    expect(parseStdout<Env>(r).status).toBe("SUCCESS");
  });
});
