// `registry tls ca create` and `registry tls cert create` (Consul 1.4's command/tls): the files for
// the agents' own TLS (docs/operations.md, TLS) in the working directory, named as Consul names them
// with the domain (default `registry`) where Consul has `consul`: <domain>-agent-ca.pem and
// -key.pem; <dc>-server-<domain>-<n>.pem and -key.pem (likewise -client- and -cli-), n the first
// number whose two files are both free. An existing CA file is never overwritten.
import { Command } from 'commander';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { CliError } from '../cli-error';
import { out } from '../output';

const collect = (value: string, previous: string[]) => [...previous, value];

/** The certificate kinds and what Consul gives each. */
const KINDS = {
  server: { sans: true, ips: true, extKeyUsage: ['serverAuth', 'clientAuth'] },
  client: { sans: true, ips: true, extKeyUsage: ['clientAuth', 'serverAuth'] },
  cli: { sans: false, ips: false, extKeyUsage: [] },
} as const;

const SERVER_WARNING = `==> WARNING: Server Certificates grants authority to become a
    server and access all state in the cluster including root keys
    and all ACL tokens. Do not distribute them to production hosts
    that are not server nodes. Store them as securely as CA keys.`;

function days(value: string): number {
  if (!/^[+-]?\d+$/.test(value)) throw new CliError(`Failed to parse args: invalid value "${value}" for flag -days: parse error`);
  return Number(value);
}

/** Written only if absent (O_EXCL): a file made meanwhile is an error, never overwritten. */
function save(file: string, data: string, mode: number): void {
  try {
    writeFileSync(file, data, { flag: 'wx', mode });
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  out(`==> Saved ${file}`);
}

function caCreate(): Command {
  const c = new Command('create')
    .description('create a new CA for the agents\' TLS')
    .option('--days <n>', 'number of days the CA is valid for from now on', days, 1825)
    .option('--domain <domain>', 'domain of the registry cluster (file names; the name constraint with -name-constraint)', 'registry')
    .option('--name-constraint', 'add name constraints for the CA: only -domain, localhost and -additional-name-constraint')
    .option('--additional-name-constraint <dns>', 'another permitted DNS name (repeatable; with -name-constraint)', collect, []);
  return c.action(async () => {
    const o = c.opts();
    const certFile = `${o.domain}-agent-ca.pem`;
    const keyFile = `${o.domain}-agent-ca-key.pem`;
    for (const f of [certFile, keyFile]) if (existsSync(f)) throw new CliError(`${f} already exists.`);
    const { createAgentCa } = await import('@registry/ca');
    let ca;
    try {
      ca = createAgentCa({ days: o.days, permittedDnsDomains: o.nameConstraint ? [...o.additionalNameConstraint, o.domain, 'localhost'] : [] });
    } catch (e) {
      throw new CliError((e as Error).message);
    }
    save(certFile, ca.certPem, 0o644);
    save(keyFile, ca.keyPem, 0o600);
  });
}

function certCreate(): Command {
  const c = new Command('create')
    .description('create a new certificate signed by the agent CA')
    .option('--server', 'generate a server certificate')
    .option('--client', 'generate a client certificate')
    .option('--cli', 'generate a CLI certificate')
    .option('--ca <file>', 'the CA certificate (default <domain>-agent-ca.pem)', '#DOMAIN#-agent-ca.pem')
    .option('--key <file>', 'the CA key (default <domain>-agent-ca-key.pem)', '#DOMAIN#-agent-ca-key.pem')
    .option('--days <n>', 'number of days the certificate is valid for from now on', days, 365)
    .option('--dc <dc>', 'the datacenter', 'dc1')
    .option('--domain <domain>', 'the domain', 'registry')
    .option('--node <name>', 'with -server: also name <node>.server.<dc>.<domain>')
    .option('--additional-dnsname <dns>', 'another DNS name in the SANs (repeatable; localhost is always included)', collect, [])
    .option('--additional-ipaddress <ip>', 'another IP address in the SANs (repeatable; 127.0.0.1 is always included)', collect, []);
  return c.action(async () => {
    const o = c.opts();
    if (o.ca === '') throw new CliError('Please provide the ca');
    if (o.key === '') throw new CliError('Please provide the key');
    const chosen = (['server', 'client', 'cli'] as const).filter((k) => o[k]);
    if (chosen.length !== 1) throw new CliError('Please provide either -server, -client, or -cli');
    const kind = chosen[0]!;
    if (o.node && kind !== 'server') throw new CliError('-node requires -server');
    const spec = KINDS[kind];
    const name = `${kind}.${o.dc}.${o.domain}`;
    const extraDns = (o.additionalDnsname as string[]).map((d) => d.trim()).filter((d) => d !== '');
    const extraIps = (o.additionalIpaddress as string[]).map((d) => d.trim()).filter((d) => d !== '');
    for (const ip of extraIps) if (isIP(ip) === 0) throw new CliError(`Invalid IP address: ${JSON.stringify(ip)}`);
    // As Consul: the additional names first, then the node's, the kind's own and localhost; a CLI
    // certificate names only itself and localhost.
    const dnsNames = spec.sans ? [...extraDns, ...(o.node ? [`${o.node}.server.${o.dc}.${o.domain}`] : []), name, 'localhost'] : [name, 'localhost'];
    const ipAddresses = spec.ips ? [...extraIps, '127.0.0.1'] : [];

    const prefix = `${o.dc}-${kind}-${o.domain}`;
    let certFile: string | undefined;
    let keyFile = '';
    for (let i = 0; i <= 10_000; i++) {
      if (!existsSync(`${prefix}-${i}.pem`) && !existsSync(`${prefix}-${i}-key.pem`)) {
        [certFile, keyFile] = [`${prefix}-${i}.pem`, `${prefix}-${i}-key.pem`];
        break;
      }
    }
    if (certFile === undefined) throw new CliError("Could not find a filename that doesn't already exist");

    const caFile = (o.ca as string).replace('#DOMAIN#', o.domain);
    const caKeyFile = (o.key as string).replace('#DOMAIN#', o.domain);
    const read = (file: string, what: string) => {
      try {
        return readFileSync(file, 'utf8');
      } catch (e) {
        // Worded as Go's os error: `open registry-agent-ca.pem: no such file or directory`.
        const err = e as NodeJS.ErrnoException;
        const cause = err.code === 'ENOENT' ? 'no such file or directory' : err.code === 'EACCES' ? 'permission denied' : err.message;
        throw new CliError(`Error reading ${what}: open ${file}: ${cause}`);
      }
    };
    const caCertPem = read(caFile, 'CA');
    const caKeyPem = read(caKeyFile, 'CA key');
    if (kind === 'server') out(SERVER_WARNING);
    out(`==> Using ${caFile} and ${caKeyFile}`);
    const { createAgentCert } = await import('@registry/ca');
    let made;
    try {
      made = createAgentCert({ caCertPem, caKeyPem, commonName: name, days: o.days, dnsNames, ipAddresses, extKeyUsage: spec.extKeyUsage });
    } catch (e) {
      throw new CliError(`==> ${(e as Error).message}`);
    }
    save(certFile, made.certPem, 0o644);
    save(keyFile, made.keyPem, 0o600);
  });
}

export function tlsCommand(): Command {
  const tls = new Command('tls').description('create the CA and certificates for the agents\' TLS');
  tls.addCommand(new Command('ca').description('the agent TLS CA').addCommand(caCreate()));
  tls.addCommand(new Command('cert').description('agent TLS certificates').addCommand(certCreate()));
  return tls;
}
