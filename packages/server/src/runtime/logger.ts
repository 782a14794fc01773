// Logs: pino, in Consul's shapes — hclog-like text lines by default, `@level/@message/@module/@timestamp`
// JSON with -log-json. Logging stays off the hot path (debug level for per-request detail).
// Secrets never reach a line: fields that carry tokens are censored by pino, and every line is
// scrubbed of `token=` query values and of the token values this agent was configured with.
import pino, { type Logger } from 'pino';

export type { Logger };

/** The levels an operator may give (`-log-level`, `log_level`), as Consul names them. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'err'] as const;

/** Consul spellings → pino's; `silent` is for tests. */
const PINO_LEVEL: Record<string, string> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  warning: 'warn',
  err: 'error',
  error: 'error',
  fatal: 'fatal',
  silent: 'silent',
};

/** pino's level for a Consul level name, or undefined when the name is not a level. */
export function pinoLevel(level: string): string | undefined {
  return PINO_LEVEL[level.toLowerCase()];
}

export function invalidLogLevel(level: string): string {
  return `invalid log level "${level}": valid levels are ${LOG_LEVELS.join(', ')}`;
}

const CENSOR = '<hidden>';

/** Field paths whose values are tokens, wherever a log call puts them. */
const REDACT_PATHS = [
  'token',
  'Token',
  'SecretID',
  'secretId',
  'headers["x-registry-token"]',
  'headers["x-consul-token"]',
  'headers.authorization',
  'req.headers["x-registry-token"]',
  'req.headers["x-consul-token"]',
  'req.headers.authorization',
  '*.token',
  '*.Token',
  '*.SecretID',
];

/** Token values the agent knows (its configured ACL tokens); never written even inside a message. */
const knownSecrets = new Set<string>();

export function addLogSecret(secret: string | undefined): void {
  // Short values would censor ordinary words; real tokens are UUIDs or long random strings.
  if (secret && secret.length >= 8) knownSecrets.add(secret);
}

/** `?token=…` / `&token=…` in a path or URL → the value hidden. */
export function withoutTokenQuery(text: string): string {
  return text.replace(/([?&]token=)[^&\s"]*/gi, `$1${CENSOR}`);
}

function scrub(line: string): string {
  let out = withoutTokenQuery(line);
  for (const s of knownSecrets) if (out.includes(s)) out = out.split(s).join(CENSOR);
  return out;
}

/** Every logger (root and children) so a reload can change the level of all of them. */
const family = new WeakMap<Logger, Set<WeakRef<Logger>>>();

/** Set the level of `root` and every child made from it (SIGHUP, PUT /v1/agent/reload). */
export function setLogLevel(root: Logger, level: string): void {
  const lvl = pinoLevel(level);
  if (!lvl) throw new Error(invalidLogLevel(level));
  root.level = lvl;
  const kids = family.get(root);
  if (!kids) return;
  for (const ref of kids) {
    const kid = ref.deref();
    if (kid) kid.level = lvl;
    else kids.delete(ref);
  }
}

export function createLogger(level: string, json: boolean, destination: NodeJS.WritableStream = process.stderr): Logger {
  const lvl = pinoLevel(level);
  if (!lvl) throw new Error(invalidLogLevel(level));
  const kids = new Set<WeakRef<Logger>>();
  const common = {
    level: lvl,
    base: undefined,
    redact: { paths: REDACT_PATHS, censor: CENSOR },
    onChild: (child: Logger) => void kids.add(new WeakRef(child)),
  };
  // Each line is re-shaped here (pino's bindings formatter does not see child bindings, and
  // Consul's JSON names the module `@module`), which is also where secrets are scrubbed.
  const stream = {
    write(line: string) {
      const o = JSON.parse(scrub(line)) as Record<string, unknown>;
      const { level: l, time, msg, module, ...rest } = o;
      const name = pino.levels.labels[l as number] ?? 'info';
      if (json) {
        destination.write(
          JSON.stringify({ '@level': name, '@message': msg ?? '', '@module': module ?? 'agent', '@timestamp': new Date(time as number).toISOString(), ...rest }) + '\n',
        );
        return;
      }
      // Text: "2026-11-22T00:00:00.000Z [INFO]  agent.server.raft: entering leader state: term=3"
      const upper = name.toUpperCase();
      const kv = Object.entries(rest)
        .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`)
        .join(' ');
      destination.write(
        `${new Date(time as number).toISOString()} [${upper}]${' '.repeat(Math.max(1, 6 - upper.length))}${module ?? 'agent'}: ${msg ?? ''}${kv ? `: ${kv}` : ''}\n`,
      );
    },
  };
  const root = pino(common, stream as any);
  family.set(root, kids);
  return root;
}
