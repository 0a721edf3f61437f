// `loopgate export RUN DIR`: a run's recorded workspace, written out whatever the run's layout (as root
// here, an overlay unmounted when the run finished), per attempt, refusing what it cannot do.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopgate, parseStdout, removeTemps, show, tempDir, writeTask } from "./cli.js";

afterAll(removeTemps);

// Attempt 1 writes one file and fails the gate; attempt 2 writes the answer: both attempts are recorded.
const TASK = `id: export
prompt: Make greeting.txt say hi.
workspace: ./repo
gates:
  - id: hi
    run: ["sh", "-c", "grep -qx hi greeting.txt"]
    timeout: 10s
budget: { attempts: 2 }
`;
const BUILDER = `#!/bin/sh
echo "attempt $LOOPGATE_ATTEMPT" > "note-$LOOPGATE_ATTEMPT.txt"
[ "$LOOPGATE_ATTEMPT" = 2 ] && echo hi > greeting.txt
mkdir -p bin && printf '#!/bin/sh\\necho run\\n' > bin/run && chmod 750 bin/run
exit 0
`;

interface Exported {
  run_id: string;
  dir: string;
  attempt: number;
  phase: string;
  observation_id: string;
  files: number;
  dirs: number;
  symlinks: number;
  bytes: number;
  skipped: string[];
}

describe("loopgate export", () => {
  const store = tempDir();
  let runId = "";
  beforeAll(async () => {
    const file = writeTask(TASK);
    const builder = join(tempDir(), "builder.sh");
    writeFileSync(builder, BUILDER);
    chmodSync(builder, 0o755);
    const r = await loopgate(["run", file, "--builder", builder, "--store", store, "--json"]);
    expect(r.code, show(r)).toBe(0);
    runId = parseStdout<{ run_id: string }>(r).run_id;
  }, 120_000);

  it("writes the final workspace, says what it wrote, and --json carries the same", async () => {
    const dir = join(tempDir(), "final");
    const r = await loopgate(["export", runId, dir, "--store", store]);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `wrote run ${runId}'s workspace after attempt 2's builder to ${dir}: 4 file\\(s\\), 1 folder\\(s\\)`,
      ),
    );
    expect(readdirSync(dir).sort()).toEqual(["bin", "greeting.txt", "note-1.txt", "note-2.txt"]);
    expect(readFileSync(join(dir, "greeting.txt"), "utf8")).toBe("hi\n");
    expect(readFileSync(join(dir, "note-2.txt"), "utf8")).toBe("attempt 2\n");
    const j = await loopgate(["export", runId, join(tempDir(), "again"), "--store", store, "--json"]);
    expect(j.code, show(j)).toBe(0);
    const out = parseStdout<Exported>(j);
    expect(out).toMatchObject({ run_id: runId, attempt: 2, phase: "after_builder", files: 4, dirs: 1 });
    expect(out.bytes).toBe(
      "hi\n".length + "attempt 1\n".length + "attempt 2\n".length + "#!/bin/sh\necho run\n".length,
    );
    // The observation it names is the one the log recorded after attempt 2's builder.
    const events = await loopgate(["events", runId, "--store", store, "--json"]);
    const observed = events.stdout
      .trim()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as {
            type: string;
            data: { phase?: string; attempt?: number; observation_id?: string };
          },
      )
      .filter((e) => e.type === "workspace_observed" && e.data.phase === "after_builder");
    expect(out.observation_id).toBe(observed.find((e) => e.data.attempt === 2)?.data.observation_id);
  });

  it("--attempt 1 writes the workspace as attempt 1's builder left it", async () => {
    const dir = join(tempDir(), "first");
    const r = await loopgate(["export", runId, dir, "--attempt", "1", "--store", store]);
    expect(r.code, show(r)).toBe(0);
    expect(readFileSync(join(dir, "greeting.txt"), "utf8")).toBe("hello\n");
    expect(existsSync(join(dir, "note-1.txt"))).toBe(true);
    expect(existsSync(join(dir, "note-2.txt"))).toBe(false);
  });

  it("refuses an attempt the run did not observe, a folder that is not empty, and an unknown run, writing nothing", async () => {
    const none = await loopgate(["export", runId, join(tempDir(), "x"), "--attempt", "3", "--store", store]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(
      `run ${runId} recorded no observation after attempt 3's builder; it has one after attempt 1, 2`,
    );
    const full = tempDir();
    writeFileSync(join(full, "mine.txt"), "keep");
    const busy = await loopgate(["export", runId, full, "--store", store]);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain("is not empty");
    expect(readdirSync(full)).toEqual(["mine.txt"]);
    const unknown = await loopgate([
      "export",
      "20200101-000000-abcdef",
      join(tempDir(), "y"),
      "--store",
      store,
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no run 20200101-000000-abcdef");
  });

  it("after gc pruned the run's folder, says its files are gone", async () => {
    const gc = await loopgate(["gc", "--older-than", "0s", "--store", store]);
    expect(gc.code, show(gc)).toBe(0);
    const dir = join(tempDir(), "pruned");
    mkdirSync(dir);
    const r = await loopgate(["export", runId, dir, "--store", store]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`run ${runId}'s folder`);
    expect(r.stderr).toContain("is gone");
    expect(readdirSync(dir)).toEqual([]);
  });
});
