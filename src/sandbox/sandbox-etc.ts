import { lstatSync, readdirSync, readlinkSync } from "node:fs";

/**
 * What the sandbox sees of the host's `/etc`: what name resolution, TLS roots, locale, the dynamic linker
 * and the runtimes need — never the whole folder, which holds `shadow`, `ssh` host keys, `ssl/private`,
 * service configurations with passwords and package-manager credentials (`npmrc`, `pip.conf`).
 * docs/explanation/sandbox.md lists it; runtimes' own folders (RUNTIME_ETC) are added as found.
 */
export const SANDBOX_ETC: readonly string[] = [
  "alternatives",
  "ca-certificates",
  "ca-certificates.conf",
  "debian_version",
  "fonts",
  "gai.conf",
  "gitconfig",
  "group",
  "host.conf",
  "hostname",
  "hosts",
  "inputrc",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "locale.alias",
  "locale.gen",
  "localtime",
  "magic",
  "magic.mime",
  "mime.types",
  "mtab",
  "networks",
  "nsswitch.conf",
  "os-release",
  "passwd",
  "perl",
  "protocols",
  "python3",
  "python3.11",
  "resolv.conf",
  "rpc",
  "services",
  "shells",
  "ssl/certs",
  "ssl/openssl.cnf",
  "terminfo",
  "timezone",
];

/** Runtimes keep their configuration in `/etc/<name>…` folders (`java-17-openjdk`, `python3.11`, `ruby`). */
const RUNTIME_ETC = /^(java|python|perl|ruby|php|lua|guile|R$)/;

let runtimeEtc: string[] | null = null;
function runtimeEtcEntries(): string[] {
  if (runtimeEtc) return runtimeEtc;
  try {
    runtimeEtc = readdirSync("/etc").filter((n) => RUNTIME_ETC.test(n));
  } catch {
    runtimeEtc = [];
  }
  return runtimeEtc;
}

/** bwrap arguments for a read-only `/etc` holding only the curated entries (and a task's `extra` ones). */
export function curatedEtc(extra: readonly string[]): string[] {
  const args = ["--tmpfs", "/etc"];
  for (const name of [...new Set([...SANDBOX_ETC, ...runtimeEtcEntries(), ...extra])].sort()) {
    const host = `/etc/${name}`;
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(host);
    } catch {
      continue;
    }
    if (name.includes("/")) args.push("--dir", host.slice(0, host.lastIndexOf("/")));
    if (st.isSymbolicLink()) args.push("--symlink", readlinkSync(host), host);
    else args.push("--ro-bind", host, host);
  }
  args.push("--remount-ro", "/etc");
  return args;
}
