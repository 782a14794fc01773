// The `limits.dns_*` keys of the config file: read into the DNS interface's limits, defaults when
// absent, and a wrong value is an error naming the key and the file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '@registry/server';
import { errorsOf } from '../support/config-errors';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'registry-dns-limits-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function file(content: unknown): string {
  const path = join(dir, 'limits.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
}

test('defaults: caps derived at start (undefined here), 10 s idle, 16 in flight, 1024 pending UDP queries', () => {
  expect(buildConfig({ dev: true }).dns.limits).toEqual({ maxConns: undefined, maxConnsPerClient: undefined, tcpIdleTimeoutMs: 10_000, tcpMaxInFlight: 16, udpMaxPending: 1024 });
});

test('each key is read, beside the HTTP keys of the same section', () => {
  const path = file({ limits: { http_max_conns: 100, dns_max_conns: 50, dns_max_conns_per_client: 0, dns_tcp_idle_timeout: '2.5s', dns_tcp_max_in_flight: 4, dns_udp_max_pending: 64 } });
  const cfg = buildConfig({ dev: true, configFile: [path] });
  expect(cfg.dns.limits).toEqual({ maxConns: 50, maxConnsPerClient: 0, tcpIdleTimeoutMs: 2_500, tcpMaxInFlight: 4, udpMaxPending: 64 });
  expect(cfg.http.maxConns).toBe(100);
});

test('a wrong value is an error naming the key and the file', () => {
  const path = file({ limits: { dns_max_conns: 0, dns_tcp_idle_timeout: 'soon', dns_tcp_max_in_flight: 0, dns_udp_max_pending: 1.5, dns_max_conn: 3 } });
  const errors = errorsOf(() => buildConfig({ dev: true, configFile: [path] })).join('\n');
  expect(errors).toContain(`${path}: invalid config key limits.dns_max_conn`);
  const only = file({ limits: { dns_max_conns: 0 } });
  expect(errorsOf(() => buildConfig({ dev: true, configFile: [only] })).join()).toContain(`${only}: limits.dns_max_conns must be an integer ≥ 1`);
  const idle = file({ limits: { dns_tcp_idle_timeout: 'soon' } });
  expect(errorsOf(() => buildConfig({ dev: true, configFile: [idle] })).join()).toContain(`${idle}: limits.dns_tcp_idle_timeout must be a duration such as "10s"`);
  const inFlight = file({ limits: { dns_tcp_max_in_flight: 0 } });
  expect(errorsOf(() => buildConfig({ dev: true, configFile: [inFlight] })).join()).toContain('limits.dns_tcp_max_in_flight must be an integer ≥ 1');
});
