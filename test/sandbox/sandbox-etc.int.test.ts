// The sandbox's /etc is one read-only mount of a copy of the curated entries: what the copy holds, when a
// new one is made, and that an entry not everyone may read is never copied.
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { etcCopy } from "../../src/sandbox/sandbox-etc.js";

let root: string;
let etc: string;
let base: string;
// Sorted, as the sandbox asks for them.
const NAMES = ["absent", "fonts", "hosts", "mtab", "passwd", "private-dir", "secret", "ssl/certs"];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "loopgate-etc-test-"));
  etc = join(root, "etc");
  base = join(root, "copies");
  mkdirSync(base);
  mkdirSync(join(etc, "fonts", "conf.d"), { recursive: true });
  mkdirSync(join(etc, "ssl", "certs"), { recursive: true });
  mkdirSync(join(etc, "ssl", "private"), { mode: 0o700 });
  mkdirSync(join(etc, "private-dir"));
  writeFileSync(join(etc, "hosts"), "127.0.0.1 localhost\n", { mode: 0o644 });
  writeFileSync(join(etc, "passwd"), "root:x:0:0::/root:/bin/sh\n", { mode: 0o644 });
  writeFileSync(join(etc, "fonts", "fonts.conf"), "<fontconfig/>\n", { mode: 0o644 });
  symlinkSync("../fonts.conf", join(etc, "fonts", "conf.d", "10-link.conf"));
  symlinkSync("../proc/self/mounts", join(etc, "mtab"));
  writeFileSync(join(etc, "ssl", "certs", "ca.pem"), "CERT\n", { mode: 0o644 });
  writeFileSync(join(etc, "ssl", "private", "key.pem"), "KEY\n", { mode: 0o600 });
  writeFileSync(join(etc, "secret"), "TOP-SECRET\n", { mode: 0o600 });
  writeFileSync(join(etc, "private-dir", "open.txt"), "open\n", { mode: 0o644 });
  writeFileSync(join(etc, "private-dir", "closed.txt"), "CLOSED\n", { mode: 0o640 });
  chmodSync(join(etc, "fonts"), 0o755);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every path in a tree, relative to it. */
function walk(dir: string, rel = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    out.push(r);
    if (lstatSync(join(dir, r)).isDirectory()) out.push(...walk(dir, r));
  }
  return out;
}

// Far enough apart that no call reuses the previous one's copy without looking at the folder again.
let clock = 1_000_000;
const later = () => {
  clock += 600_000;
  return clock;
};

describe("the copy of the curated /etc entries", () => {
  it("holds the readable entries as they are and only stand-ins for the others", () => {
    const copy = etcCopy(NAMES, { from: etc, base, now: later() });
    expect(copy).not.toBeNull();
    if (!copy) return;
    expect(copy.dir).toMatch(new RegExp(`^${base}/etc-[0-9a-f]{32}$`));
    expect(copy.bound).toEqual(["private-dir", "secret"]);
    expect(walk(copy.dir)).toEqual([
      "fonts",
      "fonts/conf.d",
      "fonts/conf.d/10-link.conf",
      "fonts/fonts.conf",
      "hosts",
      "mtab",
      "passwd",
      "private-dir",
      "secret",
      "ssl",
      "ssl/certs",
      "ssl/certs/ca.pem",
    ]);
    for (const f of ["hosts", "passwd", "fonts/fonts.conf", "ssl/certs/ca.pem"]) {
      expect(readFileSync(join(copy.dir, f), "utf8")).toBe(readFileSync(join(etc, f), "utf8"));
      expect(lstatSync(join(copy.dir, f)).mode).toBe(lstatSync(join(etc, f)).mode);
    }
    expect(readlinkSync(join(copy.dir, "mtab"))).toBe("../proc/self/mounts");
    expect(readlinkSync(join(copy.dir, "fonts/conf.d/10-link.conf"))).toBe("../fonts.conf");
    // The stand-ins hold nothing of what they stand for.
    expect(readFileSync(join(copy.dir, "secret"), "utf8")).toBe("");
    expect(readdirSync(join(copy.dir, "private-dir"))).toEqual([]);
    // Whatever is in the copy, everyone may read: no file without o+r, no folder without o+rx.
    for (const p of walk(copy.dir)) {
      const st = lstatSync(join(copy.dir, p));
      if (st.isSymbolicLink()) continue;
      expect(st.mode & (st.isDirectory() ? 0o005 : 0o004), p).toBe(st.isDirectory() ? 0o005 : 0o004);
    }
    expect(lstatSync(copy.dir).mode & 0o777).toBe(0o755);
  });

  it("is made again when an entry changes, and reused while nothing does", () => {
    const first = etcCopy(NAMES, { from: etc, base, now: later() });
    const again = etcCopy(NAMES, { from: etc, base, now: later() });
    expect(again?.dir).toBe(first?.dir);
    writeFileSync(join(etc, "hosts"), "127.0.0.1 localhost\n10.0.0.1 db\n");
    const changed = etcCopy(NAMES, { from: etc, base, now: later() });
    expect(changed?.dir).not.toBe(first?.dir);
    expect(readFileSync(join(changed?.dir ?? "", "hosts"), "utf8")).toContain("10.0.0.1 db");
    // A symlink added to a folder changes the folder, so the copy too.
    symlinkSync("ca.pem", join(etc, "ssl", "certs", "abcd1234.0"));
    const linked = etcCopy(NAMES, { from: etc, base, now: later() });
    expect(linked?.dir).not.toBe(changed?.dir);
    expect(readlinkSync(join(linked?.dir ?? "", "ssl/certs/abcd1234.0"))).toBe("ca.pem");
    // The previous copies are young: a sandbox may still have one mounted, so they stay.
    expect(existsSync(first?.dir ?? "")).toBe(true);
  });

  it("a file that stops being readable by everyone leaves the copy and is bound instead", () => {
    chmodSync(join(etc, "passwd"), 0o600);
    try {
      const copy = etcCopy(NAMES, { from: etc, base, now: later() });
      expect(copy?.bound).toEqual(["passwd", "private-dir", "secret"]);
      expect(readFileSync(join(copy?.dir ?? "", "passwd"), "utf8")).toBe("");
    } finally {
      chmodSync(join(etc, "passwd"), 0o644);
    }
  });

  it("removes copies that are no longer current once a day old, and keeps younger ones", () => {
    const old = join(base, "etc-0123456789abcdef0123456789abcdef");
    const young = join(base, "etc-fedcba9876543210fedcba9876543210");
    mkdirSync(old);
    writeFileSync(join(old, "hosts"), "old\n");
    mkdirSync(young);
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600_000);
    utimesSync(old, twoDaysAgo, twoDaysAgo);
    writeFileSync(join(etc, "hosts"), "127.0.0.1 localhost\n# new copy\n");
    const copy = etcCopy(NAMES, { from: etc, base, now: later() });
    expect(copy).not.toBeNull();
    expect(existsSync(old)).toBe(false);
    expect(existsSync(young)).toBe(true);
  });

  it("within a moment of the last look, the same copy is used without looking again", () => {
    const t = later();
    const first = etcCopy(NAMES, { from: etc, base, now: t });
    writeFileSync(join(etc, "hosts"), "127.0.0.1 localhost\n# changed within the moment\n");
    expect(etcCopy(NAMES, { from: etc, base, now: t + 1 })?.dir).toBe(first?.dir);
    expect(etcCopy(NAMES, { from: etc, base, now: t + 5_000 })?.dir).not.toBe(first?.dir);
  });

  it("gives none where no base folder can be kept: every entry is then bound", () => {
    expect(etcCopy(NAMES, { from: etc, base: null, now: later() })).toBeNull();
  });
});
