import { describe, expect, it } from "vitest";
import { escapeControl, lineStreamer, logTail, oneLine } from "../../../src/cli/output/excerpt.js";

describe("escapeControl", () => {
  it("escapes what could drive a terminal, keeps tabs and text", () => {
    expect(escapeControl("a\u001b[2Jb\tc\u0007\u009b")).toBe("a\\x1b[2Jb\tc\\x07\\u009b");
  });

  it("escapes carriage returns, DEL, every C1 control and the bidirectional overrides", () => {
    expect(escapeControl("a\rb\u007fc\u0085d\u202ee\u2066f")).toBe("a\\x0db\\u007fc\\u0085d\\u202ee\\u2066f");
  });

  it("leaves JSON the same JSON: what it escapes outside C0 are JSON escapes of the same characters", () => {
    const value = { name: "x\u001b[2J\u009bK\u007f\u202e\n" };
    expect(JSON.parse(escapeControl(JSON.stringify(value, null, 2)))).toEqual(value);
  });

  it("oneLine shows a name's newlines instead of starting a line", () => {
    expect(oneLine("y\nSUCCESS \u001b[H")).toBe("y\\nSUCCESS \\x1b[H");
  });
});

describe("logTail", () => {
  it("prefers the lines that name a failure, and says how long the log is", () => {
    const log = [
      "TAP version 13",
      "ok 1 - a",
      "not ok 2 - b",
      "  duration_ms: 3",
      "# pass 1",
      "# todo 0",
    ].join("\n");
    expect(logTail(log, 6)).toEqual(["not ok 2 - b", "… 6 lines in all"]);
    // With the command that shows the whole log (a real run id, never a placeholder), it is named.
    expect(logTail(log, 6, 200, "npx loopgate status r-1 --json")).toEqual([
      "not ok 2 - b",
      "… 6 lines in all; the whole log: npx loopgate status r-1 --json",
    ]);
  });

  it("falls back to the last lines when nothing names a failure, and cuts long lines", () => {
    const log = ["one", "two", "three", "x".repeat(300)].join("\n");
    const tail = logTail(log, 2, 50);
    expect(tail[0]).toBe("three");
    expect(tail[1]).toHaveLength(50);
    expect(tail[1]?.endsWith("…")).toBe(true);
    expect(tail[2]).toContain("4 lines in all");
  });

  it("an empty log gives no lines", () => {
    expect(logTail("")).toEqual([]);
  });
});

describe("lineStreamer", () => {
  it("writes whole lines with the prefix, across chunk boundaries, and flushes the rest", () => {
    const out: string[] = [];
    const s = lineStreamer("builder| ", (l) => out.push(l));
    s.push("wor");
    s.push("king 1\nworking 2\nhal");
    expect(out).toEqual(["builder| working 1", "builder| working 2"]);
    s.push("f\u001b[31m");
    s.flush();
    expect(out).toEqual(["builder| working 1", "builder| working 2", "builder| half\\x1b[31m"]);
    s.flush();
    expect(out).toHaveLength(3);
  });

  it("shows a line that never ends in pieces instead of holding it without bound", () => {
    const out: string[] = [];
    const s = lineStreamer("g| ", (l) => out.push(l), 10);
    s.push("y".repeat(25));
    expect(out.length).toBe(1);
    expect(out[0]?.startsWith("g| ")).toBe(true);
  });
});
