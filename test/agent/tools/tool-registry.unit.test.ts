import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentTool, ToolContext } from "../../../src/agent/tools/tool.js";
import {
  defaultTools,
  executeToolCall,
  isMutating,
  toolSpecs,
} from "../../../src/agent/tools/tool-registry.js";

const ctx: ToolContext = { workspace: "/nonexistent", sandbox: "none", network: false, timeoutMs: 1000 };

/** A fake tool that records the arguments it ran with. */
function recorder() {
  const ran: unknown[] = [];
  const schema = z.strictObject({
    path: z.string().max(10),
    count: z.number().int().min(1).max(3).optional(),
  });
  const tool: AgentTool<typeof schema> = {
    name: "probe",
    description: "records calls",
    schema,
    mutating: false,
    async execute(args) {
      ran.push(args);
      return {
        result: {
          content: `ran ${args.path}`,
          isError: false,
          exitCode: 0,
          durationMs: 1,
          subject: args.path,
        },
      };
    },
  };
  return { tool: tool as AgentTool, ran };
}

const thrower: AgentTool = {
  name: "boom",
  description: "throws",
  schema: z.strictObject({}),
  mutating: true,
  async execute() {
    throw new Error("disk on fire");
  },
};

describe("executeToolCall", () => {
  it("runs a valid call and marks it valid", async () => {
    const { tool, ran } = recorder();
    const r = await executeToolCall(
      [tool],
      { id: "1", name: "probe", args: { path: "a.txt", count: 2 } },
      ctx,
    );
    expect(r).toMatchObject({ content: "ran a.txt", isError: false, valid: true, exitCode: 0 });
    expect(ran).toEqual([{ path: "a.txt", count: 2 }]);
  });

  it("answers an unknown tool with the list of tool names", async () => {
    const { tool, ran } = recorder();
    const r = await executeToolCall([tool, thrower], { id: "1", name: "rm_rf", args: {} }, ctx);
    expect(r.isError).toBe(true);
    expect(r.valid).toBe(false);
    expect(r.exitCode).toBeNull();
    expect(r.content).toContain('unknown tool "rm_rf"');
    expect(r.content).toContain("probe, boom");
    expect(ran).toHaveLength(0);
  });

  const invalid: [string, unknown, RegExp][] = [
    ["wrong type", { path: 7 }, /path: .*expected string, received number/],
    ["missing field", { count: 1 }, /path: required \(expected string\)/],
    ["extra field", { path: "a", rogue: true }, /\(root\): unexpected field\(s\) rogue/],
    ["too long", { path: "x".repeat(11) }, /path: .*<=10 characters/],
    ["out of range", { path: "a", count: 4 }, /count: .*<=3/],
    ["not an integer", { path: "a", count: 1.5 }, /count: .*expected int/],
    ["not an object", "path=a", /\(root\): .*expected object/],
  ];
  it.each(invalid)("rejects %s without running the tool", async (_label, args, pattern) => {
    const { tool, ran } = recorder();
    const r = await executeToolCall([tool], { id: "1", name: "probe", args }, ctx);
    expect(r.isError).toBe(true);
    expect(r.valid).toBe(false);
    expect(r.exitCode).toBeNull();
    expect(r.content).toMatch(/^invalid arguments for probe, so it did not run/);
    expect(r.content).toMatch(pattern);
    expect(ran).toHaveLength(0);
  });

  it("names every bad field at once", async () => {
    const { tool } = recorder();
    const r = await executeToolCall([tool], { id: "1", name: "probe", args: { count: "2", extra: 1 } }, ctx);
    expect(r.content.split("\n").filter((l) => l.startsWith("- "))).toHaveLength(3);
  });

  it("turns a thrown error into an error result, and never throws", async () => {
    const r = await executeToolCall([thrower], { id: "1", name: "boom", args: {} }, ctx);
    expect(r).toMatchObject({ isError: true, valid: true, exitCode: null });
    expect(r.content).toBe("boom failed: Error: disk on fire");
  });

  it("treats missing arguments as an empty object for a tool with no required fields", async () => {
    const r = await executeToolCall([thrower], { id: "1", name: "boom", args: undefined }, ctx);
    expect(r.valid).toBe(true);
  });
});

describe("toolSpecs and isMutating", () => {
  it("exposes the five default tools with their schemas", () => {
    const specs = toolSpecs(defaultTools);
    expect(specs.map((s) => s.name)).toEqual(["bash", "read_file", "write_file", "edit_file", "list_files"]);
    for (const s of specs) expect(s.description.length).toBeGreaterThan(40);
    const bash = specs[0];
    expect(bash?.inputSchema.safeParse({ command: "ls", timeout_seconds: 601 }).success).toBe(false);
    expect(bash?.inputSchema.safeParse({ command: "x".repeat(20_001) }).success).toBe(false);
    expect(bash?.inputSchema.safeParse({ command: "ls", timeout_seconds: 600 }).success).toBe(true);
  });

  it("knows which tools mutate; an unknown one counts as mutating", () => {
    expect(defaultTools.filter((t) => isMutating(defaultTools, t.name)).map((t) => t.name)).toEqual([
      "bash",
      "write_file",
      "edit_file",
    ]);
    expect(isMutating(defaultTools, "mystery")).toBe(true);
  });
});
