// Config files that refuse mistakes (issue 11): one schema for every key, errors naming key and
// file, HCL beside JSON, -config-dir merged in lexical order, and -log-level checked.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '@registry/server';
import { errorsOf } from '../support/config-errors';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'registry-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

test('an unknown key is an error naming the key and the file', () => {
  const path = file('typo.json', { data_dir: dir, acl: { enabeld: true }, datacentre: 'dc2' });
  const errors = errorsOf(() => buildConfig({ configFile: [path] }));
  expect(errors).toEqual(expect.arrayContaining([`${path}: invalid config key acl.enabeld`, `${path}: invalid config key datacentre`]));
});

test('a wrong type is an error, never a silent default or an inverted switch', () => {
  const path = file('types.json', { data_dir: dir, acl: { enabled: 'false' }, ports: { http: '8501' } });
  const errors = errorsOf(() => buildConfig({ configFile: [path] }));
  expect(errors).toEqual(expect.arrayContaining([`${path}: acl.enabled must be boolean`, `${path}: ports.http must be integer`]));
  // The same values with the right types are taken.
  const good = file('good.json', { data_dir: dir, acl: { enabled: false }, ports: { http: 8501 } });
  expect(buildConfig({ configFile: [good] })).toMatchObject({ httpPort: 8501, acl: { enabled: false } });
});

test('every bad file is reported, not only the first', () => {
  const a = file('a.json', { nope: 1 });
  const b = file('b.json', '{ not json');
  const errors = errorsOf(() => buildConfig({ dev: true, configFile: [a, b] }));
  expect(errors).toHaveLength(2);
  expect(errors[0]).toBe(`${a}: invalid config key nope`);
  expect(errors[1]).toMatch(new RegExp(`^cannot read config file ${b.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
});

test('the keys other parts of the agent read (TLS, telemetry, node meta, proxy ports) validate', () => {
  const path = file('all.json', {
    data_dir: dir,
    node_id: 'a6b2c7d8-0000-4000-8000-000000000001',
    node_meta: { rack: 'r1' },
    ports: { https: 8501, proxy_min_port: 20000, proxy_max_port: 20255, dns: -1 },
    cert_file: '/x.pem',
    key_file: '/x.key',
    ca_file: '/ca.pem',
    verify_incoming: true,
    verify_outgoing: true,
    verify_server_hostname: true,
    telemetry: { prometheus_retention_time: '60s', disable_hostname: true },
    connect: { enabled: true, ca_config: { leaf_cert_ttl: '72h' } },
  });
  expect(() => buildConfig({ configFile: [path] })).not.toThrow();
});

test('HCL files are read as their JSON equivalent', () => {
  const path = file(
    'agent.hcl',
    `data_dir = "${dir}"
datacenter = "east"
ports { http = 8511 }
acl {
  enabled = true
  default_policy = "deny"
  tokens { agent = "agent-token-1234" }
}
service {
  name = "web"
  port = 80
  check { ttl = "30s" }
}
service {
  name = "db"
  port = 5432
  meta { role = "primary" }
}
dns_config { service_ttl { "web*" = "5s" } }
`,
  );
  const cfg = buildConfig({ configFile: [path] });
  expect(cfg).toMatchObject({ datacenter: 'east', httpPort: 8511, acl: { enabled: true, defaultPolicy: 'deny', tokens: { agent: 'agent-token-1234' } } });
  expect(cfg.definitions.services.map((s) => s.Name)).toEqual(['web', 'db']);
  expect(cfg.definitions.services[0]?.Check).toMatchObject({ TTL: '30s' });
  expect(cfg.definitions.services[1]?.Meta).toEqual({ role: 'primary' });
  expect(cfg.dns.serviceTtlS).toEqual({ 'web*': 5 });
});

test('an HCL syntax error or unknown HCL key names the file', () => {
  const broken = file('broken.hcl', 'acl {\n enabled = true\n');
  expect(errorsOf(() => buildConfig({ dev: true, configFile: [broken] }))[0]).toMatch(/^cannot read config file .*broken\.hcl: /);
  const typo = file('typo.hcl', 'acl { enabeld = true }');
  expect(errorsOf(() => buildConfig({ dev: true, configFile: [typo] }))).toEqual([`${typo}: invalid config key acl.enabeld`]);
});

test('-config-dir loads *.json and *.hcl in lexical order: later scalars win, lists append', () => {
  const conf = join(dir, 'conf.d');
  mkdirSync(conf);
  writeFileSync(join(conf, '10-base.json'), JSON.stringify({ data_dir: dir, log_level: 'warn', retry_join: ['10.0.0.1:8300'], service: { name: 'a' } }));
  writeFileSync(join(conf, '20-more.hcl'), 'log_level = "debug"\nretry_join = ["10.0.0.2:8300"]\nservice { name = "b" }\n');
  writeFileSync(join(conf, '30-last.json'), JSON.stringify({ services: [{ name: 'c' }] }));
  writeFileSync(join(conf, 'README.md'), 'not config: ignored');
  const cfg = buildConfig({ configDir: [conf] });
  expect(cfg.logLevel).toBe('debug');
  expect(cfg.retryJoin).toEqual(['10.0.0.1:8300', '10.0.0.2:8300']);
  expect(cfg.definitions.services.map((s) => s.Name)).toEqual(['a', 'b', 'c']);
});

test('-config-file and -config-dir load in the order given', () => {
  const conf = join(dir, 'conf.d');
  mkdirSync(conf);
  writeFileSync(join(conf, 'a.json'), JSON.stringify({ datacenter: 'from-dir' }));
  const f = file('f.json', { data_dir: dir, datacenter: 'from-file' });
  expect(buildConfig({ configSources: [{ kind: 'dir', path: conf }, { kind: 'file', path: f }] }).datacenter).toBe('from-file');
  expect(buildConfig({ configSources: [{ kind: 'file', path: f }, { kind: 'dir', path: conf }] }).datacenter).toBe('from-dir');
});

test('a bad log level names the valid levels, from a flag or a file', () => {
  expect(errorsOf(() => buildConfig({ dev: true, logLevel: 'verbose' }))).toEqual(['invalid log level "verbose": valid levels are trace, debug, info, warn, err']);
  const path = file('lvl.json', { log_level: 'loud' });
  expect(errorsOf(() => buildConfig({ dev: true, configFile: [path] }))[0]).toMatch(/valid levels are trace, debug, info, warn, err/);
  for (const level of ['trace', 'debug', 'info', 'warn', 'err']) expect(buildConfig({ dev: true, logLevel: level }).logLevel).toBe(level);
});
