// Debug-level request log (Consul's "http: Request GET /v1/… (1.2ms) from=…"): method, path with
// any `token` query value hidden, status and duration. Checked per request, so a reload that turns
// debug on or off takes effect at once, and nothing is measured when debug is off.
import type { HttpHandler } from './app';

export interface RequestLogger {
  debug(o: object, msg: string): void;
  isLevelEnabled(level: string): boolean;
}

const hideToken = (url: string) => url.replace(/([?&]token=)[^&]*/gi, '$1<hidden>');

export function withRequestLog(handler: HttpHandler, logger: RequestLogger): HttpHandler {
  return (req, res) => {
    if (!logger.isLevelEnabled('debug')) return handler(req, res);
    const start = process.hrtime.bigint();
    res.once('close', () => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const path = hideToken(req.url ?? '');
      logger.debug(
        { method: req.method, path, status: res.statusCode, duration: `${ms.toFixed(3)}ms`, from: `${req.socket.remoteAddress}:${req.socket.remotePort}` },
        `Request ${req.method} ${path} (${ms.toFixed(3)}ms)`,
      );
    });
    handler(req, res);
  };
}
