import { chmod, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** Writes a small task folder (task.yaml, repo/, heldout/, builder scripts) into a temp dir and returns its paths. */
export async function makeTask(spec: {
  taskYaml: string;
  repo: Record<string, string>;
  heldout?: Record<string, string>;
  scripts?: Record<string, string>;
}): Promise<{ dir: string; file: string; script: (name: string) => string }> {
  const dir = await mkdtemp(join(tmpdir(), "loopgate-task-"));
  const put = async (path: string, text: string, mode = 0o644) => {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
    await chmod(path, mode);
  };
  await mkdir(join(dir, "repo"), { recursive: true });
  for (const [p, t] of Object.entries(spec.repo))
    await put(join(dir, "repo", p), t, p.endsWith(".sh") ? 0o755 : 0o644);
  for (const [p, t] of Object.entries(spec.heldout ?? {})) await put(join(dir, "heldout", p), t);
  for (const [p, t] of Object.entries(spec.scripts ?? {})) await put(join(dir, "scripts", p), t, 0o755);
  await put(join(dir, "task.yaml"), spec.taskYaml);
  return { dir, file: join(dir, "task.yaml"), script: (name) => join(dir, "scripts", name) };
}
