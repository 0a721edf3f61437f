import { stringify } from "yaml";
import type { PlannedGate, TaskPlan } from "./task-plan.js";

/** A path as a YAML scalar: plain when it is plainly a path, else quoted (JSON strings are valid YAML). */
function scalar(v: string): string {
  return /^[.A-Za-z_][A-Za-z0-9_./-]*$/.test(v) ? v : JSON.stringify(v);
}

const flow = (items: readonly string[]) => `[${items.map((i) => JSON.stringify(i)).join(", ")}]`;

/** Line breaks and other control characters, which would end a comment and start YAML. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]/g;

/** A comment line: text from the repository (a script, a file name) cannot end it. */
const comment = (text: string) => `# ${text.replace(CONTROL, " ")}`;

function gateLines(g: PlannedGate): string[] {
  return [
    ...g.comment.map((c) => `  ${comment(c)}`),
    `  - id: ${g.id}`,
    `    run: ${flow(g.run)}`,
    ...(g.heldout ? [`    heldout: ${scalar(g.heldout)}`] : []),
    `    timeout: ${g.timeout}`,
    `    feedback: ${g.feedback}`,
  ];
}

const PLACEHOLDER =
  "Describe the change you want, as you would to a colleague: the bug or feature, where it lives,\nwhat must not change. (Written by loopgate init: replace this text.)\n";

/** The task file as commented YAML: what each field does here and why it was chosen. */
export function renderTask(plan: TaskPlan): string {
  const d = plan.detection;
  const prompt = stringify({ prompt: plan.prompt ?? PLACEHOLDER }, { blockQuote: "literal", lineWidth: 0 });
  const lines = [
    comment(`Written by \`loopgate init\` for ${plan.workspace}: ${d.language}, tests run by ${d.runner}`),
    ...d.evidence.map((e) => comment(`  (${e})`)),
    ...(d.others.length
      ? [
          comment(
            `Also found: ${d.others.map((o) => `${o.runner} (${o.evidence})`).join("; ")}. \`--runner\` picks one.`,
          ),
        ]
      : []),
    "# Check it with `loopgate task check` (init ran it unless told not to) and commit the lock it writes.",
    `id: ${plan.id}`,
    ...(plan.prompt === null ? ["# The builder's instructions: replace the placeholder."] : []),
    prompt.replace(/\n$/, ""),
    "# Every run works in its own copy of this folder; nothing here is changed.",
    `workspace: ${scalar(plan.workspace)}`,
    "# Changes the builder makes here reach the gates; changes elsewhere are not carried (a warning).",
    `deliverables: ${flow(plan.deliverables)}`,
    "# Restored from the pristine copy for every gate run; changing one blocks SUCCESS. The tests, the",
    "# runner's and compiler's settings and the dependency lists: what the verifier itself reads.",
    `protected: ${flow(plan.protected)}`,
  ];
  if (plan.dependencies.length)
    lines.push(
      "# Shared read-only by every run (builder and gates) instead of copied; part of what is protected.",
      `dependencies: ${flow(plan.dependencies)}`,
    );
  lines.push("gates:");
  for (const g of plan.gates) lines.push(...gateLines(g));
  if (plan.proposedHeldout)
    lines.push(
      ...gateLines(plan.proposedHeldout).map((l) =>
        l.trimStart().startsWith("#") ? l : `  # ${l.slice(2)}`,
      ),
    );
  lines.push("budget: { attempts: 3 }");
  if (plan.oracle)
    lines.push(
      "# The reference solution: `loopgate task check` runs it as a builder; it must reach SUCCESS and doing",
      "# nothing must not. It lies outside the workspace, so the builder never sees it.",
      `oracle: ${scalar(plan.oracle)}`,
    );
  else
    lines.push(
      "# A reference solution (an executable outside the repository that makes the change in the folder it",
      "# starts in) lets `loopgate task check` prove the gates accept a fix and reject doing nothing:",
      "# oracle: ./solution.sh",
    );
  return `${lines.join("\n")}\n`;
}
