// `registry services register|deregister` (Consul 1.5's command/services): service definitions
// from files (HCL or JSON) or flags, registered with the agent.
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { clientOf, withClientFlags } from '../http-flags';
import { out } from '../output';
import { readServiceFile } from '../service-definitions';

const collect = (v: string, prev: string[] = []) => [...prev, v];

export function servicesCommand(): Command {
  const services = new Command('services').description('register and deregister services with the agent');

  const register = withClientFlags(new Command('register').description('register services from files or flags'))
    .argument('[files...]', 'service definition files')
    .option('--name <name>', 'the service name (without files)')
    .option('--id <id>', 'the service ID (default: the name)')
    .option('--address <addr>', 'the service address')
    .option('--port <port>', 'the service port', (v) => Number(v))
    .option('--tag <tag>', 'a tag (repeatable)', collect)
    .option('--meta <key=value>', 'metadata (repeatable)', collect);
  services.addCommand(
    register.action((files: string[]) =>
      attempt('Error registering service', async () => {
        const o = register.opts();
        let defs: Record<string, unknown>[];
        if (files.length === 0) {
          if (!o.name) throw usage('Service registration requires at least one argument or flags.');
          const meta: Record<string, string> = {};
          for (const kv of o.meta ?? []) {
            const i = kv.indexOf('=');
            if (i <= 0) throw usage(`Error parsing -meta ${JSON.stringify(kv)}: expected key=value`);
            meta[kv.slice(0, i)] = kv.slice(i + 1);
          }
          defs = [{ Name: o.name, ID: o.id, Address: o.address, Port: o.port, Tags: o.tag, Meta: meta }];
        } else {
          if (o.name || o.id) throw usage('Flags such as -name and -id cannot be combined with files.');
          defs = [];
          for (const f of files) defs.push(...(await readServiceFile(f)));
        }
        const client = clientOf(o);
        for (const d of defs) {
          await client.put('/v1/agent/service/register', d, { local: true });
          out(`Registered service: ${d.Name}`);
        }
      }),
    ),
  );

  const deregister = withClientFlags(new Command('deregister').description('deregister services named in files or by -id'))
    .argument('[files...]', 'service definition files')
    .option('--id <id>', 'the service ID');
  services.addCommand(
    deregister.action((files: string[]) =>
      attempt('Error deregistering service', async () => {
        const o = deregister.opts();
        if (files.length === 0 && !o.id) throw usage('Service deregistration requires at least one argument or -id.');
        if (files.length > 0 && o.id) throw usage('Only one of -id or files may be given.');
        const ids: string[] = o.id ? [o.id] : [];
        for (const f of files) for (const d of await readServiceFile(f)) ids.push(String(d.ID ?? d.Name));
        const client = clientOf(o);
        for (const id of ids) {
          await client.put(`/v1/agent/service/deregister/${encodeURIComponent(id)}`, undefined, { local: true });
          out(`Deregistered service: ${id}`);
        }
      }),
    ),
  );
  return services;
}
