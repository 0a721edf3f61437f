import { readdirSync, statSync } from "node:fs";
import { encodePathBytes, fsPath } from "../core/kernel/path-bytes.js";

/**
 * Regular files under a task's own folder (held-out, canary), relative to it, `/`-separated, sorted; a
 * folder that cannot be read lists nothing. A name that is not UTF-8 is listed encoded (path-bytes.ts).
 * For the task author's small folders, not for workspaces (those are observed by the WorkspaceObserver).
 */
export function listFiles(dir: string, rel = ""): string[] {
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(fsPath(rel ? `${dir}/${rel}` : dir), { encoding: "buffer" })
      .map(encodePathBytes)
      .sort();
  } catch {
    return out;
  }
  for (const name of names) {
    const r = rel ? `${rel}/${name}` : name;
    const st = statSync(fsPath(`${dir}/${r}`));
    if (st.isDirectory()) out.push(...listFiles(dir, r));
    else if (st.isFile()) out.push(r);
  }
  return out;
}
