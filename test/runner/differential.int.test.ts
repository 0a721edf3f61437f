import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder, oracleBuilder } from "../../src/builders/command-builder.js";
import { oracleTreeOf } from "../../src/runner/run/context/oracle-tree.js";
import type { RunContext } from "../../src/runner/run/context/run-context.js";
import { runPaths } from "../../src/runner/run/context/run-context.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { RunJournal } from "../../src/runner/stream/run-journal.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "./task-fixture.js";

// A differential gate end to end, through runTask and real bubblewrap. The oracle's answer is assembled at
// run time (printf), so its literal exists in no task file: only in the oracle's tree and in loopgate's memory.
const NEEDLE = ["printf", "'ORACLE-%s-%s'", "expected", "9137"].join(" ");

const taskYaml = (cases = "") => `id: diff
prompt: make bin/answer print the answer
workspace: ./repo
oracle: ./scripts/solution.sh
gates:
  - id: cli
    differential:
      run: ["sh", "bin/answer"]
      cases:
        - { name: scan, files: { "control.txt": "CTRL-5521" } }
${cases}    timeout: 60s
budget: { attempts: 2 }
`;

// The oracle: its bin/answer prints the needle, stored in the tree; bin/nonce prints a value drawn when the tree was built.
const solution = `#!/bin/sh
set -eu
${NEEDLE} > expected.txt
echo >> expected.txt
od -An -N8 -tx8 /dev/urandom | tr -d ' ' > nonce.txt
printf '#!/bin/sh\\ncat expected.txt\\n' > bin/answer
printf '#!/bin/sh\\ncat nonce.txt\\n' > bin/nonce
`;

// Scans every mount of its sandbox except the host's read-only system directories for a string.
const scanFn = `scan() {
  for d in $(awk '{print $5}' /proc/self/mountinfo | sort -u); do
    case $d in /|/usr|/usr/*|/etc|/etc/*|/proc|/proc/*|/dev|/dev/*) ;;
    *) if grep -rqsF "$1" "$d" 2>/dev/null; then echo found; return; fi ;; esac
  done
  echo absent
}`;

// A hostile builder: at build time and at gate time it looks everywhere it can for the oracle's answer.
const snoop = `#!/bin/sh
${scanFn}
needle=$(${NEEDLE})
build=$(scan "$needle")
marker=$(scan "$(printf 'WSMARK-%s' 77)")
cat > bin/answer <<'EOF'
#!/bin/sh
${scanFn}
needle=$(${NEEDLE})
mounts=$(awk '{print $5}' /proc/self/mountinfo | grep -Ev '^/(proc|dev)(/|$)|^/etc/' | sort -u | tr '\\n' ' ')
secrets=$(for f in shadow ssh ssl/private; do test -e /etc/$f && printf '%s,' $f; done)
echo "build=BUILD marker=MARKER gate=$(scan "$needle") control=$(scan CTRL-5521) etc-secrets=[$secrets] mounts=$mounts"
EOF
sed -i "s/BUILD/$build/; s/MARKER/$marker/" bin/answer
echo "All tests passed (build scan: $build)"
`;

let localDir: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-diff-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
});

async function fixture(opts: { cases?: string; solution?: string } = {}) {
  return makeTask({
    taskYaml: taskYaml(opts.cases),
    repo: { "bin/answer": "#!/bin/sh\necho wrong\n", "marker.txt": "WSMARK-77\n" },
    scripts: { "solution.sh": opts.solution ?? solution, "snoop.sh": snoop },
  });
}

describe("differential gates in a run", () => {
  it("the oracle's own solution passes (task check's oracle run)", async () => {
    const t = await fixture();
    const loaded = loadTask(t.file);
    const env = await runTask({
      loaded,
      builder: oracleBuilder(loaded.oracle ?? ""),
      store,
      localDir,
      sandbox: "bubblewrap",
    });
    expect(env.status, env.reason).toBe("SUCCESS");
    expect(env.gates[0]?.log_excerpt).toBe("differential: all 1 cases match");
    await rm(t.dir, { recursive: true, force: true });
  });

  it("the expected values are unreachable: a builder that scans its whole filesystem at build and gate time finds nothing", async () => {
    const nonce = '        - { name: nonce, run: ["sh", "bin/nonce"] }\n';
    const t = await fixture({ cases: nonce });
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: commandBuilder(`'${t.script("snoop.sh")}'`),
      store,
      localDir,
      sandbox: "bubblewrap",
    });
    expect(env.status).toBe("ESCALATED");
    const runDir = join(localDir, "runs", env.run_id);
    // The needle does exist on disk, in the oracle's tree under the run folder (so the scan had something to find).
    expect(readFileSync(join(runDir, "oracle-tree/expected.txt"), "utf8")).toBe("ORACLE-expected-9137\n");
    for (const attempt of [1, 2]) {
      const gate = env.gates.find((g) => g.attempt === attempt);
      const got = gate?.log_excerpt.match(/stdout got: +"(.*)"/)?.[1] ?? "";
      // Positive controls: the scanner found the workspace marker at build time and the case file at gate time.
      expect(got, gate?.log_excerpt).toContain("marker=found");
      expect(got).toContain("control=found");
      // Attempt 2's builder ran after attempt 1's gate built the oracle's tree: still out of its reach.
      expect(got).toContain("build=absent");
      expect(got).toContain("gate=absent");
      const mounts =
        got
          .match(/mounts=(.*?)(\\n)?$/)?.[1]
          ?.trim()
          .split(" ") ?? [];
      // /etc is a tmpfs of curated read-only entries (each its own mount, left out of the list above).
      expect(got).toContain("etc-secrets=[]");
      expect(new Set(mounts), got).toEqual(new Set(["/", "/case", "/etc", "/tmp", "/tree", "/usr"]));
    }
    // The tree was built once for the run: both attempts expected the same nonce.
    const nonces = env.gates.map(
      (g) => g.log_excerpt.match(/case "nonce":[\s\S]*?stdout expected: "(\w+)\\n"/)?.[1],
    );
    expect(nonces[0]).toMatch(/^[0-9a-f]{16}$/);
    expect(nonces[1]).toBe(nonces[0]);
    expect(env.claims.map((c) => c.text).join("\n")).toContain("build scan: absent");
    // The required fix the builder got says the gate failed, and carries none of the oracle's output.
    const events = await store.readStream(RunJournal.stream(env.run_id));
    const fix = events.find((e) => e.type === "required_fix_issued");
    expect(fix?.type === "required_fix_issued" && fix.data.text).toContain("- check cli: not passed\n");
    expect(JSON.stringify(events.filter((e) => e.type === "attempt_started"))).not.toContain(
      "ORACLE-expected",
    );
    await rm(t.dir, { recursive: true, force: true });
  });

  it("an oracle that fails to build its tree ends the run in TOOL_FAILURE, never a pass", async () => {
    const t = await fixture({ solution: "#!/bin/sh\necho 'reference broke' >&2\nexit 1\n" });
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: commandBuilder(`'${t.script("snoop.sh")}'`),
      store,
      localDir,
      sandbox: "bubblewrap",
    });
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toMatch(
      /gate cli: the oracle's tree could not be built: the oracle .*solution\.sh exited 1: reference broke/,
    );
    expect(env.gates[0]?.passed).toBe(false);
    expect(existsSync(join(localDir, "runs", env.run_id, "oracle-tree"))).toBe(false);
    await rm(t.dir, { recursive: true, force: true });
  });

  it("refuses a generator that lives inside the workspace, where the builder could read it", async () => {
    const gen = (where: string) => `      generator: { run: ["sh", "${where}", "\${seed}"] }\n`;
    const inside = await makeTask({
      taskYaml: taskYaml().replace("    timeout: 60s", `${gen("repo/gen.sh")}    timeout: 60s`),
      repo: { "gen.sh": "echo '{}'\n", "bin/answer": "" },
      scripts: { "solution.sh": solution },
    });
    expect(() => loadTask(inside.file)).toThrow(
      /gates\[0\]\.differential\.generator\.run\[1\]: the generator's repo\/gen\.sh lies inside the workspace/,
    );
    const outside = await makeTask({
      taskYaml: taskYaml().replace("    timeout: 60s", `${gen("scripts/gen.sh")}    timeout: 60s`),
      repo: { "bin/answer": "" },
      scripts: { "solution.sh": solution, "gen.sh": "echo '{}'\n" },
    });
    expect(loadTask(outside.file).hidden).toContain(outside.script("gen.sh"));
    await rm(inside.dir, { recursive: true, force: true });
    await rm(outside.dir, { recursive: true, force: true });
  });

  it("is built once per run, reused on resume, and rebuilt when absent", async () => {
    const t = await fixture();
    const loaded = loadTask(t.file);
    const env = await runTask({
      loaded,
      builder: oracleBuilder(loaded.oracle ?? ""),
      store,
      localDir,
      sandbox: "bubblewrap",
    });
    const runDir = join(localDir, "runs", env.run_id);
    const nonce = () => readFileSync(join(runDir, "oracle-tree/nonce.txt"), "utf8");
    const first = nonce();
    // A resumed run has a new context over the same run folder.
    const ctx = () =>
      ({
        loaded,
        runDir,
        pristineDir: runPaths(runDir).pristineDir,
        journal: { runId: env.run_id },
        sandbox: "bubblewrap",
        mounts: [],
        network: false,
        signal: undefined,
      }) as unknown as RunContext;
    const again = oracleTreeOf(ctx());
    expect(await again()).toEqual({ dir: join(runDir, "oracle-tree") });
    expect(nonce()).toBe(first);
    await rm(join(runDir, "oracle-tree"), { recursive: true });
    expect(await oracleTreeOf(ctx())()).toEqual({ dir: join(runDir, "oracle-tree") });
    expect(nonce()).not.toBe(first);
    expect(existsSync(join(runDir, "oracle-tree.partial"))).toBe(false);
    await rm(t.dir, { recursive: true, force: true });
  });
});
