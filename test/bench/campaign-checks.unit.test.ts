// The kill campaign's log checks must be able to fail: each is handed a log broken the way it must
// detect (a gap, a duplicate revision, a lost acknowledged event, an in-doubt call run again) and a sound
// log it must pass.
import { describe, expect, it } from "vitest";
import {
  blindReruns,
  type LoggedEvent,
  logProblems,
  lostAcknowledged,
  openMutatingCalls,
  shortOfCount,
} from "../../bench/campaign/log-checks.js";
import { prng } from "../../bench/campaign/prng.js";
import { clean, emptyTally } from "../../bench/campaign/report.js";

let position = 0;
/** Events of one stream, revisions as given, positions increasing across calls. */
function stream(
  name: string,
  entries: readonly (readonly [type: string, data?: Readonly<Record<string, unknown>>, revision?: number])[],
) {
  return entries.map(
    ([type, data = {}, revision], i): LoggedEvent => ({
      stream: name,
      revision: revision ?? i,
      position: ++position,
      id: `${name}-${revision ?? i}-${position}`,
      type,
      data,
    }),
  );
}

const write = (id: string) =>
  ["tool_call_started", { call_id: id, name: "write_file", mutating: true }] as const;
const read = (id: string) =>
  ["tool_call_started", { call_id: id, name: "read_file", mutating: false }] as const;
const finished = (id: string) => ["tool_call_finished", { call_id: id }] as const;
const abandoned = (id: string) => ["tool_call_abandoned", { call_id: id }] as const;
const resumed = ["run_resumed", { in_doubt: [] }] as const;

describe("logProblems", () => {
  it("passes streams whose revisions run 0..n-1, interleaved in log order", () => {
    const a = stream("run-a", [["run_started"], ["attempt_started"]]);
    const b = stream("run-b", [["run_started"]]);
    const interleaved = ([a[0], b[0], a[1]] as LoggedEvent[]).map((e, i) => ({ ...e, position: 100 + i }));
    expect(logProblems(interleaved)).toEqual([]);
  });

  it("reports a gap in a stream's revisions", () => {
    const log = stream("run-a", [
      ["run_started", {}, 0],
      ["attempt_started", {}, 1],
      ["attempt_finished", {}, 3],
    ]);
    const problems = logProblems(log);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("revision 3 after 1 (gap)");
  });

  it("reports a revision stored twice", () => {
    const log = stream("run-a", [
      ["run_started", {}, 0],
      ["attempt_started", {}, 1],
      ["attempt_started", {}, 1],
    ]);
    const problems = logProblems(log);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("revision 1 again (duplicate");
  });

  it("reports a stream that does not start at revision 0, a reused event id and positions going back", () => {
    const [first, second] = stream("run-a", [["run_started"], ["attempt_started"]]) as [
      LoggedEvent,
      LoggedEvent,
    ];
    expect(logProblems(stream("run-b", [["run_started", {}, 1]]))).toEqual([
      "stream run-b: revision 1 after -1 (gap)",
    ]);
    expect(logProblems([first, { ...second, id: first.id }])).toEqual([`event id ${first.id} stored twice`]);
    expect(logProblems([{ ...second, revision: 0, stream: "run-c" }, first])).toEqual([
      `position ${first.position} after ${second.position}: positions must increase`,
    ]);
  });
});

describe("lostAcknowledged and shortOfCount", () => {
  const log = stream("run-a", [["run_started"], ["attempt_started", { attempt: 1 }], ["run_lease_taken"]]);

  it("pass when every acknowledged event is still there, unchanged", () => {
    expect(lostAcknowledged(log.slice(0, 2), log)).toEqual([]);
    expect(shortOfCount(log, "run-a", 2)).toEqual([]);
  });

  it("report an acknowledged event that is gone, or that changed", () => {
    const [a, b] = log as [LoggedEvent, LoggedEvent];
    expect(lostAcknowledged([a, b], [a])).toEqual([`run-a@1 attempt_started (${b.id}) is gone`]);
    const changed = lostAcknowledged([b], [a, { ...b, data: { attempt: 2 } }]);
    expect(changed).toHaveLength(1);
    expect(changed[0]).toContain("changed");
    const moved = lostAcknowledged([b], [a, { ...b, revision: 5 }]);
    expect(moved).toEqual([`run-a@1 attempt_started (${b.id}) changed to run-a@5 attempt_started`]);
  });

  it("shortOfCount reports fewer run events than the process was told were appended (lease events not counted)", () => {
    expect(shortOfCount(log, "run-a", 3)).toEqual(["run-a: 2 events, but 3 appends had been acknowledged"]);
  });
});

describe("blindReruns", () => {
  it("passes a resume that abandoned the in-doubt write and let the model write again under a new id", () => {
    const log = stream("run-a", [write("c1"), resumed, abandoned("c1"), write("c2"), finished("c2")]);
    expect(openMutatingCalls(log.slice(0, 1))).toEqual(["run-a:c1"]);
    expect(blindReruns(log)).toEqual([]);
  });

  it("passes a read-only call that was in doubt and simply repeated", () => {
    expect(blindReruns(stream("run-a", [read("r1"), resumed, read("r1"), finished("r1")]))).toEqual([]);
  });

  it("reports an in-doubt write finished after the resume without a readback", () => {
    expect(blindReruns(stream("run-a", [write("c1"), resumed, finished("c1")]))).toEqual([
      "run-a: mutating call c1 (write_file) in doubt, then run again without readback",
    ]);
  });

  it("reports an in-doubt write started again after the resume, even once abandoned", () => {
    // Not abandoned either: both offences are named.
    expect(blindReruns(stream("run-a", [write("c1"), resumed, write("c1")]))).toEqual([
      "run-a: mutating call c1 (write_file) in doubt, then started again",
      "run-a: mutating call c1 (write_file) in doubt and never resolved",
    ]);
    expect(blindReruns(stream("run-b", [write("c1"), resumed, abandoned("c1"), write("c1")]))).toEqual([
      "run-b: mutating call c1 (write_file) in doubt, then started again",
    ]);
  });

  it("reports an in-doubt write the resume passed over without resolving it", () => {
    expect(blindReruns(stream("run-a", [write("c1"), resumed, write("c2"), finished("c2")]))).toEqual([
      "run-a: mutating call c1 (write_file) in doubt and never resolved",
    ]);
  });

  it("reports a mutating call finished twice, resume or not", () => {
    expect(blindReruns(stream("run-a", [write("c1"), finished("c1"), finished("c1")]))).toEqual([
      "run-a: mutating call c1 (write_file) finished twice",
    ]);
  });
});

describe("the campaign's seed and verdict", () => {
  it("the same seed draws the same kill points; another seed others", () => {
    const draw = (seed: number) => {
      const r = prng(seed);
      return Array.from({ length: 20 }, () => r.int(1, 36));
    };
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
    expect(draw(42).every((k) => k >= 1 && k <= 36)).toBe(true);
  });

  it("is clean only when every must-be-zero column is 0 and every resumed envelope matched", () => {
    const ok = { ...emptyTally(), kills: 3, resumed: 3, equal: 3 };
    expect(clean(ok)).toBe(true);
    for (const column of ["corrupted", "lost", "blind", "notResumable"] as const)
      expect(clean({ ...ok, [column]: 1 }), column).toBe(false);
    expect(clean({ ...ok, equal: 2 })).toBe(false);
  });
});
