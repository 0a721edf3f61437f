import { existsSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runBuilderArgv } from "../../../builders/command-builder.js";
import type { OracleTree } from "../../../gates/gate.js";
import { sandboxedAs } from "../../../sandbox/sandbox-user.js";
import { copyTree } from "../../../workspace/copy-tree.js";
import { removeTree } from "../../../workspace/remove-tree.js";
import type { RunContext } from "./run-context.js";

const built = new WeakMap<RunContext, Promise<OracleTree>>();

/**
 * The run's oracle tree for differential gates: a copy of the run's pristine workspace with the task's
 * oracle run on it, sandboxed as the oracle builder is (its tree the only writable place, no secrets).
 * Built once per run under the run folder (`oracle-tree/`), never inside the builder's workspace, sandbox
 * or gate environment; a resumed run reuses it, or rebuilds it when it is absent.
 */
export function oracleTreeOf(ctx: RunContext): () => Promise<OracleTree> {
  return () => {
    let p = built.get(ctx);
    if (!p) {
      p = buildOracleTree(ctx).catch((e: unknown) => ({ error: (e as Error).message }));
      built.set(ctx, p);
    }
    return p;
  };
}

async function buildOracleTree(ctx: RunContext): Promise<OracleTree> {
  const dir = join(ctx.runDir, "oracle-tree");
  // Only a finished build is ever renamed to oracle-tree, so its presence means it is whole.
  if (existsSync(dir)) return { dir };
  const oracle = ctx.loaded.oracle;
  if (!oracle) return { error: "the task declares no oracle" };
  const partial = join(ctx.runDir, "oracle-tree.partial");
  const promptDir = join(ctx.runDir, "oracle-tree.prompt");
  await removeTree(partial);
  // The oracle runs in it as the sandbox user: the copy is made theirs as it is written.
  await copyTree(ctx.pristineDir, partial, { owner: sandboxedAs(ctx.sandbox) });
  await mkdir(promptDir, { recursive: true });
  const promptFile = join(promptDir, "prompt.md");
  await writeFile(promptFile, ctx.loaded.task.prompt);
  // Sandboxed as the oracle builder is, so bounded by the same builder.timeout.
  const timeoutMs = ctx.loaded.resolved.builder.timeoutMs;
  const r = await runBuilderArgv([oracle], {
    runId: ctx.journal.runId,
    attempt: 0,
    workspace: partial,
    prompt: ctx.loaded.task.prompt,
    promptFile,
    requiredFix: null,
    sandbox: ctx.sandbox,
    allowEnv: [],
    mounts: ctx.mounts,
    network: ctx.network,
    timeoutMs,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  await removeTree(promptDir);
  const tail = r.output.trim().slice(-500);
  if (r.infrastructure) return { error: r.infrastructure };
  if (r.timedOut) return { error: `the oracle ${oracle} timed out after ${timeoutMs} ms` };
  if (r.exitCode !== 0)
    return { error: `the oracle ${oracle} exited ${r.exitCode ?? r.signal}${tail ? `: ${tail}` : ""}` };
  await rename(partial, dir);
  return { dir };
}
