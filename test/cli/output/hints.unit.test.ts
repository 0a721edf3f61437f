import { describe, expect, it } from "vitest";
import { hintCommand, pasteable } from "../../../src/cli/output/hints.js";

describe("hints", () => {
  it("a hint is the command the user started, the words, then the --store it needs", () => {
    expect(hintCommand({ me: "npx loopgate", storeArg: "" }, "events r-1")).toBe("npx loopgate events r-1");
    expect(hintCommand({ me: "loopgate", storeArg: " --store /s" }, "resume r-1")).toBe(
      "loopgate resume r-1 --store /s",
    );
  });
  it("quoted hints in a message from below the CLI are rewritten to the command the user started", () => {
    const msg =
      "no goal g in /s; `loopgate goals` lists the goals it holds (loopgate goal status g); loopgate keeps the rest";
    expect(pasteable(msg, "npx loopgate")).toBe(
      "no goal g in /s; `npx loopgate goals` lists the goals it holds (npx loopgate goal status g); loopgate keeps the rest",
    );
    // Started as `loopgate`: nothing to change.
    expect(pasteable(msg, "loopgate")).toBe(msg);
  });
});
