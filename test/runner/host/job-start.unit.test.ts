import { describe, expect, it } from "vitest";
import { DomainError, InfrastructureError, InputError } from "../../../src/core/kernel/errors.js";
import { LocalStartError, startFault, startStep } from "../../../src/runner/host/job-start.js";
import { TaskSnapshotError } from "../../../src/runner/task-source/snapshot-store.js";
import { ContentMissingError } from "../../../src/store/kernel/content-store.js";
import { StoreError } from "../../../src/store/kernel/store-errors.js";

const errno = (code: string) => Object.assign(new Error(`${code}: boom`), { code });

// Whose fault a failed start is: the task's (finished as refused) or this machine's (handed back).
describe("whose fault a job that could not start is", () => {
  const dir = "/w/tasks/abc";

  it("while the task is read, every input error and a broken snapshot are the task's", () => {
    expect(startFault(new InputError("bad yaml", "/anywhere/task.yaml"), null)).toBe("task");
    expect(startFault(new InputError("no where"), null)).toBe("task");
    expect(startFault(new TaskSnapshotError("ab".repeat(32), "its manifest is not JSON"), null)).toBe("task");
    expect(startFault(new ContentMissingError("blob", "ab", "the store"), null)).toBe("task");
  });

  it("once it is loaded, an input error naming a file of the task is the task's; any other this machine's", () => {
    expect(startFault(new InputError("no judge model", `${dir}/task.yaml: judge`), dir)).toBe("task");
    expect(startFault(new InputError("stale lock", `${dir}/task.lock.json`), dir)).toBe("task");
    expect(startFault(new InputError("key not set", "--model"), dir)).toBe("local");
    // A sibling folder that merely starts with the same letters is not the task's.
    expect(startFault(new InputError("x", "/w/tasks/abcd/task.yaml"), dir)).toBe("local");
  });

  it("the machine's: file system errors, the sandbox self-test, anything unexpected", () => {
    for (const e of [errno("ENOTDIR"), errno("ENOSPC"), new InfrastructureError("bwrap is not installed")])
      for (const d of [null, dir]) expect(startFault(e, d)).toBe("local");
  });

  it("a stored state every worker reads alike is the job's, not the machine's", () => {
    expect(startFault(new DomainError("refused by the decider"), dir)).toBe("task");
  });

  it("a lost database is neither: the worker stops as for any lost database", () => {
    expect(startFault(new StoreError("postgres://db", "cannot connect", "check it"), null)).toBe("store");
  });

  it("startStep wraps only a local failure, keeping its message", async () => {
    const local = await startStep(dir, () => Promise.reject(errno("EACCES"))).catch((e: unknown) => e);
    expect(local).toBeInstanceOf(LocalStartError);
    expect((local as Error).message).toBe("EACCES: boom");
    const task = new InputError("no judge model", `${dir}/task.yaml: judge`);
    await expect(startStep(dir, () => Promise.reject(task))).rejects.toBe(task);
    expect(await startStep(dir, () => 7)).toBe(7);
  });
});
