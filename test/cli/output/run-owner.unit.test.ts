// What `loopgate status` says to do about a run whose owner is gone: resume it, except a loopgate claude
// run, which cannot be resumed (its Claude Code session ended with its process) and is run again.
import { describe, expect, it } from "vitest";
import { CLAUDE_NOT_RESUMABLE, claudeRerun, ownerReport } from "../../../src/cli/output/run-owner.js";
import type { LoopgateEvent } from "../../../src/core/events/loopgate-event.js";

const at = "2026-12-03T18:00:00.000Z";
const ev = (type: string, data: Record<string, unknown>) =>
  ({ id: type, type, data, meta: { at, origin: "runtime" } }) as LoopgateEvent;
const started = (kind: string) =>
  ev("run_started", {
    task_id: "t",
    task_path: "/work/my tasks/task.yaml",
    task_digest: "d",
    builder: { kind, command: kind === "claude-code" ? "claude --allowedTools Bash" : "./agent.sh" },
    max_attempts: 2,
    gates: [],
    sandbox: "bubblewrap",
    run_dir: "/r",
  });
// Its owner's lease ran out an hour before `now`: the owner is gone.
const lease = ev("run_lease_taken", {
  owner: { pid: 999_999, host: "elsewhere", token: "tok" },
  expires_at: "2026-12-03T18:01:00.000Z",
  previous: null,
});
const now = new Date("2026-12-03T19:00:00.000Z");
const resume = "npx loopgate resume run-1 --store /s";

describe("ownerReport", () => {
  it("a run of any other builder whose owner is gone: continue it with resume", () => {
    const r = ownerReport([started("command"), lease], resume, now);
    expect(r.owner.alive).toBe(false);
    expect(r.hint).toBe(`its owner is gone (lease expired); continue it with: ${resume}`);
  });

  it("a loopgate claude run whose owner is gone: it cannot be resumed, and is run again", () => {
    const r = ownerReport([started("claude-code"), lease], resume, now);
    expect(r.hint).not.toContain("continue it with");
    expect(r.hint).toContain(CLAUDE_NOT_RESUMABLE);
    expect(r.hint).toContain("run its task again: npx loopgate claude '/work/my tasks/task.yaml' --store /s");
    expect(r.line).toContain(r.hint);
  });
});

describe("claudeRerun", () => {
  it("turns the resume hint into the claude command of the task, keeping the store", () => {
    expect(claudeRerun("loopgate resume run-1", "task.yaml")).toBe("loopgate claude task.yaml");
    expect(claudeRerun(resume, "/t/task.yaml")).toBe("npx loopgate claude /t/task.yaml --store /s");
  });
});
