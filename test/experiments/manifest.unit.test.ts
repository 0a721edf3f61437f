import { describe, expect, it } from "vitest";
import { InputError } from "../../src/core/kernel/errors.js";
import { manifestFromObject, parseManifest } from "../../src/experiments/manifest.js";

const valid = `name: oracle-vs-noop
arms:
  - id: noop
    builder: { noop: true }
  - id: oracle
    builder: { oracle: true }
tasks:
  - id: slug
    task: ../examples/js-slugify/task.yaml
seeds: 2
`;

function errorOf(text: string): string {
  try {
    parseManifest(text, "exp.yaml");
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return (e as Error).message;
  }
  throw new Error("expected parseManifest to reject");
}

describe("experiment manifest parsing", () => {
  it("applies the defaults and anchors paths at the manifest's folder", () => {
    const { manifest: m, dir } = parseManifest(valid, "/exps/exp.yaml");
    expect(dir).toBe("/exps");
    expect(m.seeds).toBe(2);
    expect(m.concurrency).toBe(1);
    expect(m.sandbox).toBe("bubblewrap");
    expect(m.arms.map((a) => a.policy)).toEqual(["loopgate", "loopgate"]);
    expect(m.tasks[0]?.meta).toEqual({});
    expect(m.control).toBeUndefined();
  });

  it("accepts JSON", () => {
    const json = JSON.stringify({
      name: "j",
      arms: [{ id: "a", builder: { command: "./b.sh {required_fix}" }, policy: "overlay" }],
      tasks: [{ id: "t", task: "t.yaml", gate_timeout: "5s", max_attempts: 2 }],
    });
    expect(parseManifest(json, "exp.json").manifest.arms[0]?.policy).toBe("overlay");
  });

  it("reports a YAML syntax error with its line", () => {
    expect(errorOf("name: x\narms: [\n  - id: a\n")).toMatch(/^exp\.yaml:\d+: not valid YAML/);
  });

  it("names the file, line and field of a bad policy", () => {
    const text = valid.replace("  - id: oracle\n", "  - id: oracle\n    policy: vibes\n");
    expect(errorOf(text)).toMatch(/exp\.yaml:6: arms\[1\]\.policy: /);
  });

  it("refuses a builder that names two kinds, on the builder's line", () => {
    const text = valid.replace("builder: { noop: true }", "builder: { noop: true, command: ./x.sh }");
    expect(errorOf(text)).toMatch(
      /exp\.yaml:4: arms\[0\]\.builder: a builder is exactly one of .*found command, noop/,
    );
  });

  it("refuses an unknown control arm and lists the declared ones", () => {
    expect(errorOf(`${valid}control: treatment\n`)).toMatch(
      /exp\.yaml:11: control: no arm treatment; declared: noop, oracle/,
    );
  });

  it("refuses duplicate arm ids, seeds out of range and unknown keys", () => {
    expect(errorOf(valid.replace("id: oracle", "id: noop"))).toMatch(
      /exp\.yaml:5: arms\[1\]\.id: duplicate id noop/,
    );
    expect(errorOf(valid.replace("seeds: 2", "seeds: 0"))).toMatch(/exp\.yaml:10: seeds: /);
    expect(errorOf(`${valid}repeat: 3\n`)).toMatch(/exp\.yaml:11: repeat: Unrecognized key: "repeat"/);
  });

  it("requires a builder for every (task, arm) that runs its own builds", () => {
    const text = valid.replace("    builder: { oracle: true }\n", "");
    expect(errorOf(text)).toMatch(/exp\.yaml:7: tasks\[0\]: no builder for arm oracle/);
  });

  it("checks per-task builders name declared arms", () => {
    const text = `${valid.replace("seeds: 2\n", "")}    builders: { ghost: { noop: true } }\n`;
    expect(errorOf(text)).toMatch(/exp\.yaml:10: tasks\[0\]\.builders\.ghost: no arm ghost/);
  });

  it("lets only a trust-claim arm judge another arm's runs, and only an arm that runs its own", () => {
    const fromOverlay = valid.replace(
      "    builder: { oracle: true }\n",
      "    policy: overlay\n    from: noop\n",
    );
    expect(errorOf(fromOverlay)).toMatch(/arms\[1\]\.from: only a trust-claim arm can judge/);
    const ok = valid.replace("    builder: { oracle: true }\n", "    policy: trust-claim\n    from: noop\n");
    expect(parseManifest(ok, "exp.yaml").manifest.arms[1]?.from).toBe("noop");
    const chained = `${ok.replace("seeds: 2\n", "")}`.replace(
      "  - id: oracle\n",
      "  - id: third\n    policy: trust-claim\n    from: oracle\n  - id: oracle\n",
    );
    expect(errorOf(chained)).toMatch(/arms\[1\]\.from: arm oracle must run its own builds/);
  });

  it("validates a manifest built in code with the same schema", () => {
    expect(() =>
      manifestFromObject(
        { name: "x", arms: [{ id: "a" }], tasks: [{ id: "t", task: "t.yaml" }] },
        "/",
        "bench",
      ),
    ).toThrow(/bench: tasks\[0\]: no builder for arm a/);
  });
});
