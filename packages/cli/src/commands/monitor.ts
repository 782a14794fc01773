// `registry monitor [-log-level=info]` (Consul's command/monitor): streams the agent's log lines from
// /v1/agent/monitor — its recent lines first, then each new one — until interrupted. SIGINT/SIGTERM
// end it quietly with exit 0; an agent that ends the stream (it stopped or crashed) is exit 1 with
// Consul's notice; an agent that cannot be reached, a token without agent:read or an unknown level
// is "Error starting monitor: …", exit 1.
import { Command } from 'commander';
import { CliError, ExitCode } from '../cli-error';
import { Client } from '../http-client';
import { withClientFlags } from '../http-flags';
import { out } from '../output';

export function monitorCommand(): Command {
  const c = withClientFlags(new Command('monitor').description('stream logs from a registry agent'))
    .option('--log-level <level>', 'log level of the lines to show (trace, debug, info, warn, err)', 'INFO');
  return c.action(async () => {
    const o = c.opts();
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    let res;
    try {
      res = await new Client(o).stream('/v1/agent/monitor', { query: { loglevel: o.logLevel || undefined }, signal: stop.signal });
    } catch (e) {
      if (stop.signal.aborted) return;
      throw new CliError(`Error starting monitor: ${(e as Error).message}`, 1, true);
    }
    // Lines as Go's bufio.Scanner cuts them (a trailing \r dropped); an empty line is printed as a
    // space, since Consul's client keeps "" to mean the end of the stream.
    let partial = '';
    const emit = (line: string) => out(line.replace(/\r$/, '') || ' ');
    const ended = await new Promise<boolean>((resolve) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop()!;
        for (const line of lines) emit(line);
      });
      res.on('end', () => resolve(true));
      res.on('error', () => resolve(!stop.signal.aborted));
      res.on('close', () => resolve(!stop.signal.aborted));
      stop.signal.addEventListener('abort', () => {
        res.destroy();
        resolve(false);
      });
    });
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (!ended) return;
    if (partial) emit(partial);
    out('');
    out('Remote side ended the monitor! This usually means that the\nremote side has exited or crashed.');
    throw new ExitCode(1);
  });
}
