// Consul's flags are Go-style single-dash (`-dev`, `-retry-join=x`); commander wants `--`.
// Rewrite `-name[=value]` words to `--name[=value]` before parsing, leaving values alone.

export function goFlagsToLong(argv: string[]): string[] {
  return argv.map((a) => (/^-[a-zA-Z][a-zA-Z0-9-]+(=.*)?$/.test(a) ? '-' + a : a));
}
