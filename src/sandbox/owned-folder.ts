import { lstatSync } from "node:fs";

/**
 * Whether `path` is a folder itself (not a symlink to one) owned by `uid` with none of the `forbidden`
 * mode bits: where loopgate keeps what no one else may plant or change (the stage, the copies of /etc).
 */
export function ownedAndClosed(path: string, uid: number, forbidden: number): boolean {
  const st = lstatSync(path, { throwIfNoEntry: false });
  return st?.isDirectory() === true && st.uid === uid && (st.mode & forbidden) === 0;
}
