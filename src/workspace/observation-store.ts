import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { formatPath, LoopgateError } from "../core/kernel/errors.js";
import { isEncodedPath } from "../core/kernel/path-bytes.js";
import { type Observation, observationId } from "../core/observation/observation.js";

/** An observation the store cannot produce: never written, unreadable, or not what its id promises. */
export class ObservationStoreError extends LoopgateError {
  readonly id: string;
  readonly file: string;
  constructor(code: "observation_missing" | "observation_corrupt", id: string, file: string, why: string) {
    super(code, `observation ${id} in ${file}: ${why}`);
    this.id = id;
    this.file = file;
  }
}

/** A path or link target as path-bytes.ts encodes it (JSON keeps its escapes as `\udce9`). */
const EncodedPath = z.string().refine(isEncodedPath, "not an encoded path (a stray surrogate)");

const ObservedEntrySchema = z.object({
  path: EncodedPath.pipe(z.string().min(1)),
  type: z.enum(["file", "dir", "symlink", "other"]),
  mode: z.number().int().min(0).max(0o7777),
  size: z.number().int().nonnegative(),
  hash: z.string().regex(/^([0-9a-f]{64})?$/),
  target: EncodedPath.optional(),
});
const ObservationSchema = z.object({ id: z.string(), entries: z.array(ObservedEntrySchema) });

const ID = /^[0-9a-f]{64}$/;
let tmpCounter = 0;

/** Content-addressed observations as `<dir>/<id>.json`; a read re-derives the id, so a tampered file is caught. */
export class ObservationStore {
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = path.resolve(dir);
  }

  /** Writes the observation atomically (temp file + rename); writing the same id twice is harmless. */
  async put(obs: Observation): Promise<void> {
    const file = this.fileOf(obs.id);
    if (observationId(obs.entries) !== obs.id) {
      throw new ObservationStoreError(
        "observation_corrupt",
        obs.id,
        file,
        "its id does not match its entries",
      );
    }
    await mkdir(this.dir, { recursive: true });
    const tmp = `${file}.${process.pid}.${tmpCounter++}.tmp`;
    try {
      await writeFile(tmp, JSON.stringify(obs));
      await rename(tmp, file);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  /** Reads and validates an observation; throws ObservationStoreError if it is missing or corrupt. */
  async get(id: string): Promise<Observation> {
    const file = this.fileOf(id);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") {
        throw new ObservationStoreError("observation_missing", id, file, "no such observation was stored");
      }
      throw new ObservationStoreError("observation_corrupt", id, file, `cannot read it (${String(e)})`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ObservationStoreError("observation_corrupt", id, file, "it is not valid JSON");
    }
    const parsed = ObservationSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? `${formatPath(issue.path)}: ${issue.message}` : "schema mismatch";
      throw new ObservationStoreError("observation_corrupt", id, file, `invalid content at ${where}`);
    }
    const entries = parsed.data.entries.map((e) => {
      const { target, ...rest } = e;
      return target === undefined ? rest : { ...rest, target };
    });
    if (parsed.data.id !== id || observationId(entries) !== id) {
      throw new ObservationStoreError("observation_corrupt", id, file, "its content does not hash to its id");
    }
    return { id, entries };
  }

  private fileOf(id: string): string {
    if (!ID.test(id)) {
      throw new ObservationStoreError(
        "observation_missing",
        id,
        this.dir,
        "not an observation id (64 hex digits)",
      );
    }
    return path.join(this.dir, `${id}.json`);
  }
}
