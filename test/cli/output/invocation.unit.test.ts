import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cliName, packageRoot } from "../../../src/cli/output/invocation.js";

const tmp = mkdtempSync(join(tmpdir(), "loopgate-invocation-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const root = packageRoot();
const launcher = join(root, "bin", "loopgate.js");
/** A folder holding a `loopgate` link to this package's launcher (a global install or npm link). */
const linked = join(tmp, "linked");
mkdirSync(linked);
symlinkSync(launcher, join(linked, "loopgate"));
/** A folder holding some other program named `loopgate`. */
const other = join(tmp, "other");
mkdirSync(other);
writeFileSync(join(other, "loopgate"), "#!/bin/sh\necho not this one\n", { mode: 0o755 });

/** The environment npm gives a process it runs for `npx loopgate …` (as observed with npm 11). */
const npxEnv = (PATH: string) => ({
  PATH,
  npm_command: "exec",
  npm_lifecycle_event: "npx",
  npm_lifecycle_script: "'loopgate'",
  npm_execpath: "/usr/lib/node_modules/npm/bin/npm-cli.js",
});

describe("cliName: the command the user started, so a printed hint runs as printed", () => {
  it("is `npx loopgate` under npx, although npx put a `loopgate` of this package on the child's PATH", () => {
    const npxBin = join(tmp, "npx-bin");
    mkdirSync(npxBin);
    symlinkSync(launcher, join(npxBin, "loopgate"));
    expect(cliName(npxEnv(npxBin), "/", root, join(npxBin, "loopgate"))).toBe("npx loopgate");
    expect(cliName(npxEnv(npxBin), tmp, root, join(npxBin, "loopgate"))).toBe("npx loopgate");
  });
  it("is not `npx loopgate` when npm ran something else that started loopgate by its path", () => {
    const env = { ...npxEnv("/nonexistent"), npm_lifecycle_script: "'vitest' 'run'" };
    expect(cliName(env, root, root, launcher)).toBe("node bin/loopgate.js");
  });
  it("is `node PATH` when started by the launcher's path: relative below the folder, else absolute", () => {
    expect(cliName({ PATH: "/nonexistent" }, root, root, launcher)).toBe("node bin/loopgate.js");
    expect(cliName({ PATH: "/nonexistent" }, join(root, "bin"), root, launcher)).toBe("node loopgate.js");
    expect(cliName({ PATH: "/nonexistent" }, tmp, root, launcher)).toBe(`node ${launcher}`);
    // Even with this same loopgate on PATH: the path as invoked, as the brief of the hint says.
    expect(cliName({ PATH: linked }, tmp, root, launcher)).toBe(`node ${launcher}`);
  });
  it("is `loopgate` when started by that name and PATH's loopgate is this same package (real paths)", () => {
    expect(cliName({ PATH: linked }, "/", root, join(linked, "loopgate"))).toBe("loopgate");
  });
  it("is the link's path when PATH's loopgate is another program (or there is none)", () => {
    const link = join(linked, "loopgate");
    expect(cliName({ PATH: other }, "/", root, link)).toBe(link);
    expect(cliName({ PATH: "/nonexistent" }, "/", root, link)).toBe(link);
    // A link below the folder is printed ./relative, so the shell does not look it up on PATH.
    expect(cliName({ PATH: other }, linked, root, link)).toBe("./loopgate");
  });
  it("inside another program (a test calling main): `loopgate` if PATH's is ours, else the launcher", () => {
    const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
    expect(cliName({ PATH: linked }, "/", root, vitest)).toBe("loopgate");
    expect(cliName({ PATH: other }, "/", root, vitest)).toBe(`node ${launcher}`);
    expect(cliName({ PATH: "/nonexistent" }, root, root, undefined)).toBe("node bin/loopgate.js");
  });
  it("quotes a path the shell would split", () => {
    const spaced = join(tmp, "with space");
    mkdirSync(spaced);
    const link = join(spaced, "loopgate");
    symlinkSync(launcher, link);
    expect(cliName({ PATH: "/nonexistent" }, "/", root, link)).toBe(`'${link}'`);
  });
});
