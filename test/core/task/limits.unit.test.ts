import { describe, expect, it } from "vitest";
import {
  DEFAULT_LIMITS,
  LimitExceededError,
  parseSize,
  resolveLimits,
} from "../../../src/core/task/limits.js";
import { parseTask } from "../../../src/core/task/task.js";

const task = (limits: string) => `id: t
prompt: p
workspace: ./repo
gates: [{ id: g, run: ["true"] }]
limits: ${limits}
`;

describe("parseSize", () => {
  it.each([
    ["4096", 4096],
    [4096, 4096],
    ["64K", 64 * 1024],
    ["64KiB", 64 * 1024],
    ["256MiB", 256 * 1024 ** 2],
    ["1G", 1024 ** 3],
    ["1.5 GiB", 1.5 * 1024 ** 3],
    ["2gb", 2 * 1024 ** 3],
  ])("%s is %d bytes", (text, bytes) => {
    expect(parseSize(text)).toBe(bytes);
  });

  it.each(["", "lots", "-1", "0", "1T", "1 MiB extra", 0, -5, 1.5, Number.NaN])("refuses %s", (text) => {
    expect(parseSize(text)).toBeNull();
  });
});

describe("limits in a task file", () => {
  it("absent, every default applies", () => {
    const t = parseTask(task("{}"), "task.yaml");
    expect(resolveLimits(t.limits)).toEqual({
      files: 50_000,
      totalBytes: 1024 ** 3,
      fileBytes: 256 * 1024 ** 2,
      processes: 1024,
      fileSize: 1024 ** 3,
      memory: 4 * 1024 ** 3,
    });
    expect(resolveLimits(undefined).files).toBe(DEFAULT_LIMITS.files);
  });

  it("given, each overrides its default alone", () => {
    const t = parseTask(task("{ files: 10, total_bytes: 1M, memory: 512MiB }"), "task.yaml");
    const l = resolveLimits(t.limits);
    expect(l.files).toBe(10);
    expect(l.totalBytes).toBe(1024 ** 2);
    expect(l.memory).toBe(512 * 1024 ** 2);
    expect(l.fileBytes).toBe(DEFAULT_LIMITS.file_bytes);
  });

  it.each([
    ["{ files: 0 }", /limits\.files/],
    ["{ files: 1.5 }", /limits\.files/],
    ["{ file_bytes: huge }", /limits\.file_bytes: expected a size/],
    ["{ processes: -1 }", /limits\.processes/],
    ["{ cpu: 1 }", /limits/],
  ])("%s is refused, naming the field", (limits, message) => {
    expect(() => parseTask(task(limits), "task.yaml")).toThrow(message);
  });
});

describe("LimitExceededError", () => {
  it("names the limit, its value and the path", () => {
    const e = new LimitExceededError("file_bytes", 100, 5000, "big.bin");
    expect(e.code).toBe("limit_exceeded");
    expect(e.message).toContain("limits.file_bytes is 100");
    expect(e.message).toContain("big.bin");
    expect(e.message).toContain("5000");
  });
});
