// `registry connect proxy` (Consul 1.4's command/connect/proxy) and `registry connect ca
// get-config|set-config` (command/connect/ca). The proxy itself is the server package's built-in
// proxy (packages/server/src/proxy/), which the agent also runs for a managed proxy with no Command;
// this command only reads the flags and the environment and keeps it running until a signal.
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { CliError } from '../cli-error';
import { Client, tokenOf } from '../http-client';
import { clientOf, withClientFlags, withServerFlags } from '../http-flags';
import { out } from '../output';

const collect = (v: string, prev: string[] = []) => [...prev, v];

/**
 * The proxy alone, not the server package's index (which loads the whole agent: express, Raft,
 * LevelDB…, seconds of start-up on a busy machine). A variable specifier, resolved at run time.
 */
const PROXY_MODULE = '@registry/server/dist/proxy/index.js';
const env = (name: string) => process.env[name] || undefined;

function proxyCommand(): Command {
  const c = withServerFlags(new Command('proxy').description('run a Connect proxy'))
    .option('--proxy-id <id>', "the proxy's ID on the local agent (env REGISTRY_PROXY_ID)")
    .option('--sidecar-for <service-id>', 'the ID of a service on the local agent whose registered sidecar proxy this is')
    .option('--service <name>', 'name of the service this proxy represents')
    .option('--service-addr <addr>', 'address of the local service to proxy (with -listen)')
    .option('--listen <addr>', 'address for inbound mutual-TLS connections (with -service and -service-addr)')
    .option('--upstream <name:port>', "upstream service: 'db:8181' makes db available on 127.0.0.1:8181 (repeatable)", collect)
    .option('--register', 'register the proxy with the local agent (with -service and -listen)')
    .option('--register-id <suffix>', "ID suffix for the proxy's registration")
    .option('--prometheus-bind-addr <addr>', "serve the proxy's connection metrics in Prometheus text at http://<addr>/metrics")
    .option('--log-level <level>', 'log level', 'INFO')
    .option('--log-json', 'log lines as JSON');
  return c.argument('[extra...]').action(async (extra: string[]) => {
    if (extra.length > 0) throw usage('Should have no non-flag arguments.');
    const o = c.opts();
    const client = new Client(o);
    const token = tokenOf(o) ?? env('REGISTRY_PROXY_TOKEN');
    const { runProxy } = (await import(PROXY_MODULE)) as typeof import('@registry/server');
    let running;
    try {
      running = await runProxy({
        httpAddr: client.endpoint.socketPath ? `unix://${client.endpoint.socketPath}` : `${client.endpoint.host}:${client.endpoint.port}`,
        token,
        proxyId: o.proxyId || env('REGISTRY_PROXY_ID'),
        sidecarFor: o.sidecarFor || env('REGISTRY_PROXY_SIDECAR_FOR'),
        service: o.service,
        serviceAddr: o.serviceAddr,
        listen: o.listen,
        upstreams: o.upstream ?? [],
        register: o.register ?? false,
        registerId: o.registerId,
        logLevel: String(o.logLevel).toLowerCase(),
        logJson: o.logJson ?? false,
        metrics: { prometheusBindAddr: o.prometheusBindAddr },
        say: (line) => out(line),
      });
    } catch (err) {
      throw new CliError(`==> Failed running proxy: ${(err as Error).message}`, 1, true);
    }
    await new Promise<void>((resolve) => {
      const stop = () => void running.stop().then(resolve);
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    out('==> Connect proxy shutdown');
  });
}

function caCommand(): Command {
  const ca = new Command('ca').description('interact with the Connect certificate authority');
  const get = withServerFlags(new Command('get-config').description('display the CA configuration'));
  ca.addCommand(
    get.action(() =>
      attempt('Error querying CA configuration', async () => {
        const reply = await clientOf(get.opts()).get<Record<string, unknown>>('/v1/connect/ca/configuration');
        out(JSON.stringify(reply, null, 2));
      }),
    ),
  );
  const set = withClientFlags(new Command('set-config').description('modify the CA configuration')).option('--config-file <file>', 'JSON file with the new configuration');
  ca.addCommand(
    set.action(() =>
      attempt('Error setting CA configuration', async () => {
        const o = set.opts();
        if (!o.configFile) throw usage('The -config-file flag is required');
        let body: unknown;
        try {
          body = JSON.parse(readFileSync(o.configFile, 'utf8'));
        } catch (err) {
          throw usage(`Error parsing the config file: ${(err as Error).message}`);
        }
        await clientOf(o).request('PUT', '/v1/connect/ca/configuration', { body: body as object });
        out('Configuration updated!');
      }),
    ),
  );
  return ca;
}

export function connectCommand(): Command {
  return new Command('connect').description('interact with Connect').addCommand(proxyCommand()).addCommand(caCommand());
}
