// The README's quick-start commands, run as printed (with a private --store): each must end as the
// README says — SUCCESS (exit 0) unless its comment says it is refused (ESCALATED, exit 1). A
// TOOL_FAILURE (a script that runs out, a missing file) is never what the README promises.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { commandExamples } from "../../src/selftest/readme-examples.js";
import { loopgate, ROOT, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const lines = readme.split("\n");
const quickStart = commandExamples(readme).filter((ex) => /^npx loopgate run examples\//.test(ex.text));

describe.concurrent("the README's quick-start commands work as printed", () => {
  it("the README has quick-start run commands", () => {
    expect(quickStart.length).toBeGreaterThanOrEqual(3);
  });
  for (const ex of quickStart) {
    const refused = /#\s*refused/.test(lines[ex.line - 1] ?? "");
    it(`${ex.text} → ${refused ? "ESCALATED (exit 1)" : "SUCCESS (exit 0)"}`, async () => {
      const r = await loopgate([...ex.words.slice(2), "--store", tempDir()]);
      expect(r.code, show(r)).toBe(refused ? 1 : 0);
      expect(r.stdout).toContain(refused ? "ESCALATED" : "SUCCESS");
    });
  }
});
