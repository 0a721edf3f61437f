import { describe, expect, it } from "vitest";
import type { CommandIO } from "../../../src/cli/output/io.js";
import { followOutput, runReporter } from "../../../src/cli/output/run-reporter.js";
import type { RunFlags } from "../../../src/runner/host/run-flags.js";
import type { StoreLocation } from "../../../src/store/open-store.js";

/** A command's streams that keep what was written: `stream` is stderr written to directly, `err` via io.err. */
function capture(isTTY: boolean) {
  const stream: string[] = [];
  const err: string[] = [];
  const stderr = { isTTY, write: (s: string) => stream.push(s) > 0 } as unknown as NodeJS.WriteStream;
  const io: CommandIO = { out: () => undefined, err: (s) => void err.push(s), stderr };
  return { io, stream, err };
}

const where: StoreLocation = { kind: "folder", dir: "/s", label: "/s" };

describe("how a run shows itself as it goes", () => {
  it("--verbose and --follow both ask for the builder's and gates' output live", () => {
    expect(followOutput({})).toBe(false);
    expect(followOutput({ verbose: true })).toBe(true);
    expect(followOutput({ follow: true })).toBe(true);
  });

  it("without --json the progress is shown, on stderr", () => {
    const c = capture(false);
    const shown = runReporter(c.io, {}, where);
    shown.reporter?.attemptStarted?.(1, 3);
    shown.close();
    expect(c.stream.join("")).toBe("attempt 1/3\n");
  });

  it("with --json off a terminal only warnings and notes are shown, each on its own line", () => {
    const c = capture(false);
    const shown = runReporter(c.io, { json: true }, where);
    expect(shown.reporter?.attemptStarted).toBeUndefined();
    shown.reporter?.warning?.("a protected glob matches nothing");
    shown.reporter?.note?.("a folder is not mounted");
    shown.close();
    expect(c.err).toEqual(["warning: a protected glob matches nothing\n", "note: a folder is not mounted\n"]);
    expect(c.stream).toEqual([]);
  });

  it("with --json the progress is still shown on a terminal, or when asked for with --verbose", () => {
    for (const [tty, flags] of [
      [true, { json: true }],
      [false, { json: true, verbose: true }],
    ] as [boolean, RunFlags][]) {
      const c = capture(tty);
      const shown = runReporter(c.io, flags, where);
      expect(shown.reporter?.attemptStarted).toBeTypeOf("function");
      shown.close();
    }
  });

  it("a quiet run reports nothing", () => {
    const c = capture(false);
    const shown = runReporter(c.io, {}, where, true);
    expect(shown.reporter).toBeUndefined();
    shown.close();
    expect([...c.stream, ...c.err]).toEqual([]);
  });
});
