// A watch's HTTP handler (Consul's makeHTTPWatchHandler): the value as the JSON body of a request to
// `path` with `method` (POST by default), the index in X-Registry-Index, the configured headers,
// within `timeout` (10 s by default). A 2xx answer is success; anything else, an error, a timeout,
// or a URL, method or header Node refuses is a rejection with the reason. Only the first 4 KiB of
// the answer is read (Consul keeps 4 KiB of it): an endpoint that answers megabytes costs no more.
import { request as httpRequest, type ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setLongTimeout, type LongTimer } from '../checks/long-timer';
import type { WatchHandler } from './watch-definition';
import { OUTPUT_TAIL_BYTES } from './script-handler';

type HttpHandler = Extract<WatchHandler, { kind: 'http' }>;

export function runHttpHandler(handler: HttpHandler, body: string, indexHeaders: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    let req: ClientRequest | undefined;
    let timer: LongTimer | undefined;
    let settled = false;
    const finish = (err: Error | null, output = '') => {
      if (settled) return;
      settled = true;
      timer?.clear();
      req?.destroy();
      if (err) reject(err);
      else resolve(output);
    };
    try {
      const url = new URL(handler.path);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`unsupported protocol scheme ${JSON.stringify(url.protocol.slice(0, -1))}`);
      // Header names are the operator's: a map without a prototype ("__proto__" is just a name).
      const headers = Object.assign(Object.create(null) as Record<string, string | string[]>, { 'Content-Type': 'application/json', ...indexHeaders });
      for (const [name, values] of Object.entries(handler.header)) headers[name] = values;
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      // setLongTimeout: a "1000h" timeout is waited out, not fired at once (Node's 24.8-day limit).
      timer = setLongTimeout(() => finish(new Error(`no answer within ${handler.timeoutMs} ms (http_handler_config.timeout)`)), handler.timeoutMs);
      // Throws for what Node refuses before sending (a method or header it cannot write).
      req = send(url, { method: handler.method, headers, rejectUnauthorized: !handler.tlsSkipVerify, agent: false });
      req.on('error', (err) => finish(err));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const answered = () => {
          const text = Buffer.concat(chunks).subarray(0, OUTPUT_TAIL_BYTES).toString('utf8');
          const code = res.statusCode ?? 0;
          if (code >= 200 && code <= 299) finish(null, text);
          else finish(new Error(`answered ${code} ${res.statusMessage ?? ''}${text.trim() ? `: ${text.trim()}` : ''}`));
        };
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= OUTPUT_TAIL_BYTES) answered();
        });
        res.on('end', answered);
        res.on('error', (err) => finish(err));
      });
      req.end(body);
    } catch (err) {
      finish(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
