import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LoopgateError } from "../../src/core/kernel/errors.js";
import { createObservation, type ObservedEntry } from "../../src/core/observation/observation.js";
import { ObservationStore } from "../../src/workspace/observation-store.js";
import { useTempDirs } from "./temp-dirs.js";

const h = "a".repeat(64);
const entries: ObservedEntry[] = [
  { path: "src", type: "dir", mode: 0o755, size: 0, hash: "" },
  { path: "src/a.js", type: "file", mode: 0o644, size: 3, hash: h },
  { path: "src/l", type: "symlink", mode: 0o777, size: 4, hash: "b".repeat(64), target: "a.js" },
];

describe("ObservationStore", () => {
  const tmp = useTempDirs();

  it("stores observations by id and reads them back", async () => {
    const dir = path.join(tmp(), "obs");
    const store = new ObservationStore(dir);
    const obs = createObservation(entries);
    await store.put(obs);
    await store.put(obs); // idempotent
    expect(readdirSync(dir)).toEqual([`${obs.id}.json`]);
    expect(await store.get(obs.id)).toEqual(obs);
  });

  it("says clearly when an observation is missing", async () => {
    const dir = tmp();
    const id = "c".repeat(64);
    const err = await new ObservationStore(dir).get(id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LoopgateError);
    expect(err).toMatchObject({ code: "observation_missing" });
    expect(String((err as Error).message)).toContain(path.join(dir, `${id}.json`));
  });

  it("rejects corrupt JSON, a schema violation and content that does not hash to its id", async () => {
    const dir = tmp();
    const store = new ObservationStore(dir);
    const obs = createObservation(entries);
    await store.put(obs);
    const file = path.join(dir, `${obs.id}.json`);
    const original = readFileSync(file, "utf8");

    writeFileSync(file, original.slice(0, 20));
    await expect(store.get(obs.id)).rejects.toMatchObject({ code: "observation_corrupt" });

    writeFileSync(file, original.replace('"type":"file"', '"type":"pipe"'));
    await expect(store.get(obs.id)).rejects.toThrow(/entries\[1\]\.type/);

    writeFileSync(file, original.replace(h, "d".repeat(64)));
    await expect(store.get(obs.id)).rejects.toThrow(/does not hash to its id/);
  });

  it("refuses ids that are not ids, so a path can never be smuggled in", async () => {
    await expect(new ObservationStore(tmp()).get("../../etc/passwd")).rejects.toThrow(
      /not an observation id/,
    );
  });

  it("refuses to store an observation whose id does not match its entries", async () => {
    const obs = { ...createObservation(entries), id: "e".repeat(64) };
    await expect(new ObservationStore(tmp()).put(obs)).rejects.toThrow(/id does not match/);
  });
});
