// The proxy's lines, through the agent's logger (pino, Consul's text or JSON shapes) under module
// `proxy`; message first, fields after, as the proxy's call sites read best.
import type { Logger } from '../runtime/logger';

export interface ProxyLog {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function proxyLog(logger: Logger): ProxyLog {
  const l = logger.child({ module: 'proxy' });
  return {
    debug: (msg, f) => l.debug(f ?? {}, msg),
    info: (msg, f) => l.info(f ?? {}, msg),
    warn: (msg, f) => l.warn(f ?? {}, msg),
    error: (msg, f) => l.error(f ?? {}, msg),
  };
}
