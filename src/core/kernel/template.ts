/**
 * `${name}` substitution in the manner of Python's string.Template: `$$` is a literal `$`, and any other
 * `$` is left alone, so shell, HTTP and JSON literals (`%{http_code}`, `{"exact":false}`) never collide.
 */
const pattern = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The `${...}` names a template refers to. */
export function templateNames(template: string): string[] {
  const names: string[] = [];
  for (const m of template.matchAll(pattern)) if (m[1]) names.push(m[1]);
  return names;
}

/** Substitutes `${name}` from `params`; throws on a name that is not provided. */
export function renderTemplate(template: string, params: Readonly<Record<string, string>>): string {
  return template.replace(pattern, (_whole, name: string | undefined) => {
    if (name === undefined) return "$";
    const value = params[name];
    if (value === undefined) throw new Error(`unknown template parameter \${${name}}`);
    return value;
  });
}

/** The parameters every subprocess gate may use. */
export const gateTemplateParams = [
  "gate_env",
  "workspace",
  "run_id",
  "attempt",
  "gate_id",
  "task_id",
] as const;
