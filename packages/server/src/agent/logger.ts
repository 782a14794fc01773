// Logs: pino, in Consul's shapes — hclog-like text lines by default, `@level/@message/@module/@timestamp`
// JSON with -log-json. Logging stays off the hot path (debug level for per-request detail).
import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, json: boolean, destination: NodeJS.WritableStream = process.stderr): Logger {
  const lvl = level === 'warning' ? 'warn' : level === 'err' ? 'error' : level;
  if (json) {
    return pino(
      {
        level: lvl,
        messageKey: '@message',
        base: undefined,
        timestamp: () => `,"@timestamp":"${new Date().toISOString()}"`,
        formatters: { level: (l) => ({ '@level': l }) },
      },
      destination as any,
    );
  }
  // Text: "2026-11-22T00:00:00.000Z [INFO]  agent.server.raft: entering leader state: term=3"
  const stream = {
    write(line: string) {
      const o = JSON.parse(line) as Record<string, unknown>;
      const { level: l, time, msg, module, ...rest } = o as any;
      const name = (pino.levels.labels[l as number] ?? 'info').toUpperCase();
      const kv = Object.entries(rest)
        .filter(([k]) => k !== 'pid' && k !== 'hostname')
        .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`)
        .join(' ');
      destination.write(
        `${new Date(time as number).toISOString()} [${name}]${' '.repeat(Math.max(1, 6 - name.length))}${module ?? 'agent'}: ${msg ?? ''}${kv ? `: ${kv}` : ''}\n`,
      );
    },
  };
  return pino({ level: lvl, base: undefined }, stream as any);
}
