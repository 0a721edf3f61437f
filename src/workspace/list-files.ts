import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * Regular files under a task's own folder (held-out, canary), relative to it, `/`-separated, sorted; a
 * folder that cannot be read lists nothing. For the task author's small folders, not for workspaces
 * (those are observed by the WorkspaceObserver).
 */
export function listFiles(dir: string, rel = ""): string[] {
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(join(dir, rel)).sort();
  } catch {
    return out;
  }
  for (const name of names) {
    const r = rel ? `${rel}/${name}` : name;
    const st = statSync(join(dir, r));
    if (st.isDirectory()) out.push(...listFiles(dir, r));
    else if (st.isFile()) out.push(r);
  }
  return out;
}
