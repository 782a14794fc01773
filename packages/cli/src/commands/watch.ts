// `registry watch -type TYPE [-handler CMD]` (Consul's command/watch): run blocking queries and,
// each time the answer changes, print it as JSON or give it to the handler on stdin (with
// REGISTRY_INDEX set). A failing handler ends the watch with exit 1, as in Consul.
import { Command } from 'commander';
import { usage } from '../action';
import { exitText, runChild } from '../child-process';
import { Client } from '../http-client';
import { withServerFlags } from '../http-flags';
import { stringifyKv } from '../kv-json';
import { err, out } from '../output';
import { watchPlan } from '../watch/watch-plans';

const RETRY_MS = 5_000;

export function watchCommand(): Command {
  const c = withServerFlags(new Command('watch').description('watch for changes in the cluster'))
    .option('--type <type>', 'key, keyprefix, services, nodes, service, checks or event')
    .option('--handler <cmd>', 'command to run on each change, given the JSON on stdin (default: print it)')
    .option('--shell', 'run the handler through $SHELL -c (the default)', true)
    .option('--no-shell', 'run the handler directly, split on spaces')
    .option('--key <key>', 'key to watch (type key)')
    .option('--prefix <prefix>', 'key prefix to watch (type keyprefix)')
    .option('--service <name>', 'service to watch (types service, checks)')
    .option('--tag <tag>', 'only instances with this tag (type service)')
    .option('--passingonly', 'only instances whose checks pass (type service)')
    .option('--state <state>', 'check state to watch (type checks): any, passing, warning, critical')
    .option('--name <name>', 'event name to watch (type event)');
  return c.action(async () => {
    const o = c.opts();
    if (!o.type) throw usage('Error: Must specify -type');
    const plan = watchPlan(o.type, o);
    const client = new Client(o);
    try {
      await client.get('/v1/agent/self', { local: true });
    } catch (e) {
      if (!(e instanceof Error && /Unexpected response code: 403/.test(e.message))) throw usage(`Error querying Registry agent: ${(e as Error).message}`);
    }
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);

    let index = 0n;
    let last: string | undefined;
    while (!stop.signal.aborted) {
      let got: { index: bigint; value: unknown };
      try {
        got = await plan.fetch(client, index, stop.signal);
      } catch (e) {
        if (stop.signal.aborted) break;
        err(`Watch (type: ${o.type}) errored: ${(e as Error).message}, retry in ${RETRY_MS / 1000}s`);
        await new Promise((r) => setTimeout(r, RETRY_MS));
        continue;
      }
      // An index that went backwards (a restored snapshot) starts over, as Consul's plan does; the
      // event list's index is no counter: it is sent back as it came, and each answer is new events.
      const monotonic = plan.monotonic !== false;
      const next = monotonic && got.index < index ? 0n : got.index;
      const text = stringifyKv(got.value);
      const changed = monotonic ? last === undefined || (next !== index && text !== last) : last === undefined || (next !== index && text !== '[]');
      index = next;
      if (!changed) continue;
      last = text;
      if (!o.handler) {
        out(stringifyKv(got.value, 4));
        continue;
      }
      const ok = await runHandler(o.handler, o.shell, text + '\n', index);
      if (!ok) {
        process.exitCode = 1;
        break;
      }
    }
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  });
}

function runHandler(handler: string, shell: boolean, input: string, index: bigint): Promise<boolean> {
  return new Promise((resolve) => {
    const words = shell ? [handler] : handler.split(/\s+/).filter(Boolean);
    const child = runChild(words, { shell, env: { REGISTRY_INDEX: String(index) }, stdio: ['pipe', 'inherit', 'inherit'] });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
    child.on('error', (e) => {
      err(`Error executing handler: ${e.message}`);
      resolve(false);
    });
    child.on('exit', (code, signal) => {
      const failed = exitText(code, signal);
      if (failed) err(`Error executing handler: ${failed}`);
      resolve(!failed);
    });
  });
}
