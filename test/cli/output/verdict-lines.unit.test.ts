import { describe, expect, it } from "vitest";
import { hintsFor } from "../../../src/cli/output/hints.js";
import type { CommandIO } from "../../../src/cli/output/io.js";
import { printEnvelope, verdictText } from "../../../src/cli/output/verdict-lines.js";
import type { StoreLocation } from "../../../src/store/open-store.js";
import { envelope } from "../envelopes.js";

const where: StoreLocation = { kind: "folder", dir: "/s", label: "/s" };
// How loopgate was started depends on the test process; the hints below start with it, whatever it is.
const { me, storeArg } = hintsFor(where);

/** The lines after the summary: the audit trail, then how to continue (when offered), then the store. */
const tail = (text: string) => text.slice(text.indexOf("\naudit trail:") + 1).split("\n");

describe("a verdict as people read it", () => {
  it("ends with the audit trail's command and the store; a finished run is not offered resume", () => {
    const env = envelope();
    const lines = tail(verdictText(env, where));
    expect(lines[0]).toBe(`audit trail: ${me} events ${env.run_id}${storeArg}`);
    expect(lines[1]).toMatch(/^store: /);
    expect(lines.slice(2)).toEqual([""]);
  });

  it("an interrupted run is offered the resume that continues it", () => {
    const env = envelope({ status: "TOOL_FAILURE", reason: "interrupted (SIGINT) in attempt 1" });
    expect(tail(verdictText(env, where))[1]).toBe(`continue it: ${me} resume ${env.run_id}${storeArg}`);
  });

  it("an interrupted run that cannot be resumed says so instead", () => {
    const env = envelope({ status: "TOOL_FAILURE", reason: "interrupted (SIGINT) in attempt 1" });
    const lines = tail(verdictText(env, where, "rerun it with loopgate claude"));
    expect(lines[1]).toBe("rerun it with loopgate claude");
    expect(lines.join("\n")).not.toContain("resume");
  });

  it("a tool failure that is no interruption is not offered resume", () => {
    const env = envelope({ status: "TOOL_FAILURE", reason: "the sandbox could not start" });
    expect(tail(verdictText(env, where))[1]).toMatch(/^store: /);
  });
});

describe("printing an envelope", () => {
  const printed = (json: boolean) => {
    const out: string[] = [];
    const io = { out: (s: string) => void out.push(s), err: () => undefined } as unknown as CommandIO;
    printEnvelope(io, envelope(), { json, store: "/s" });
    return out.join("");
  };
  it("--json prints the envelope itself, and nothing else", () => {
    expect(JSON.parse(printed(true))).toEqual(envelope());
  });
  it("without --json it prints the verdict for the store --store names", () => {
    expect(printed(false)).toBe(verdictText(envelope(), where));
  });
});
