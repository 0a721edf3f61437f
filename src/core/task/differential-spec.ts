import { z } from "zod";
import { templateNames } from "../kernel/template.js";

/** What a differential case's argv may refer to: the tree under test and the case's input files, both read-only. */
export const differentialCaseParams = ["tree", "files"] as const;
/** What a differential generator's argv may refer to. */
export const differentialGeneratorParams = ["seed", "count"] as const;

/** How stdout (and, when compared, stderr) is normalised before the oracle's and the builder's are compared. */
export const CompareMode = z.enum(["exact", "trim_trailing_whitespace", "sorted_lines", "json"]);
export type CompareMode = z.infer<typeof CompareMode>;

function templated(known: readonly string[]) {
  const names = new Set(known);
  return (args: readonly string[], ctx: z.RefinementCtx) => {
    args.forEach((arg, i) => {
      for (const name of templateNames(arg))
        if (!names.has(name))
          ctx.addIssue({
            code: "custom",
            path: [i],
            message: `unknown parameter \${${name}}; known here: ${known.map((p) => `\${${p}}`).join(", ")}`,
          });
    });
  };
}

const caseArgv = z
  .array(z.string())
  .min(1, "run needs at least the program to start")
  .superRefine(templated(differentialCaseParams));

/** A file name inside a case's input folder: relative, no `..`, no empty segment. */
const caseFileName = z
  .string()
  .min(1)
  .max(200)
  .refine((p) => !p.startsWith("/") && p.split("/").every((s) => s !== "" && s !== "." && s !== ".."));

/**
 * One case: the argv (the gate's `run`, or the case's own) plus `args`, its stdin, and input files written
 * into a read-only folder (`${files}`). Only inputs: the expected output is whatever the oracle's tree prints.
 */
export const DifferentialCase = z
  .object({
    name: z.string().min(1).max(200).optional(),
    run: caseArgv.optional(),
    args: z.array(z.string()).max(1000).superRefine(templated(differentialCaseParams)).default([]),
    stdin: z.string().max(1_000_000).optional(),
    files: z
      .record(z.string(), z.string().max(1_000_000))
      .superRefine((files, ctx) => {
        for (const name of Object.keys(files))
          if (!caseFileName.safeParse(name).success)
            ctx.addIssue({
              code: "custom",
              path: [name],
              message: `${JSON.stringify(name)}: a case file name is relative to the case's folder: no leading /, no . or .. segments`,
            });
      })
      .optional(),
  })
  .strict();
export type DifferentialCase = z.infer<typeof DifferentialCase>;

/**
 * The `differential:` block of a gate: the same cases run against the oracle's tree and the builder's,
 * each in its own sandbox, outputs compared after a declared normaliser.
 */
export const DifferentialSpec = z
  .object({
    run: caseArgv.optional(),
    cases: z.array(DifferentialCase).max(1000).default([]),
    generator: z
      .object({
        run: z
          .array(z.string())
          .min(1, "run needs at least the program to start")
          .superRefine(templated(differentialGeneratorParams)),
        count: z.number().int().min(1).max(1000).default(20),
      })
      .strict()
      .optional(),
    compare: CompareMode.default("exact"),
    compare_exit_code: z.boolean().default(true),
    stderr: z.enum(["ignore", "presence", "compare"]).default("ignore"),
  })
  .strict()
  .superRefine((d, ctx) => {
    if (d.cases.length === 0 && !d.generator)
      ctx.addIssue({
        code: "custom",
        path: ["cases"],
        message: "a differential gate needs at least one case, or a generator",
      });
    const names = new Set<string>();
    d.cases.forEach((c, i) => {
      if (!c.run && !d.run)
        ctx.addIssue({
          code: "custom",
          path: ["cases", i, "run"],
          message: "this case has no run, and the gate declares no differential.run to fall back on",
        });
      const name = caseName(c, i);
      if (names.has(name))
        ctx.addIssue({ code: "custom", path: ["cases", i, "name"], message: `duplicate case name ${name}` });
      names.add(name);
    });
  });
export type DifferentialSpec = z.infer<typeof DifferentialSpec>;

/** A case's name as logs show it: its declared name, else `case-N` (1-based). */
export function caseName(c: DifferentialCase, index: number, prefix = "case"): string {
  return c.name ?? `${prefix}-${index + 1}`;
}
