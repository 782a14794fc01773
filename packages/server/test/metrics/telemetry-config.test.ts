// The `telemetry` stanza of a config file: Consul's keys, registry's defaults, wrong types refused.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '@registry/server';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'registry-telemetry-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function withFile(content: unknown) {
  const path = join(dir, `c${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(content));
  return () => buildConfig({ dev: true, configFile: [path] });
}

test('defaults: hostname in gauge names, Prometheus format on (24 h retention)', () => {
  expect(buildConfig({ dev: true }).telemetry).toEqual({ disableHostname: false, prometheusRetentionMs: 24 * 3600_000 });
});

test('disable_hostname and prometheus_retention_time are read', () => {
  expect(withFile({ telemetry: { disable_hostname: true, prometheus_retention_time: '0s' } })().telemetry).toEqual({ disableHostname: true, prometheusRetentionMs: 0 });
  expect(withFile({ telemetry: { prometheus_retention_time: '60s' } })().telemetry.prometheusRetentionMs).toBe(60_000);
});

test.each([
  [{ telemetry: { disable_hostname: 'yes' } }, /disable_hostname/],
  [{ telemetry: { prometheus_retention_time: 60 } }, /prometheus_retention_time/],
  [{ telemetry: { prometheus_retention_time: 'soon' } }, /prometheus_retention_time/],
])('%j is refused, naming the key', (content, message) => {
  expect(withFile(content)).toThrow(message);
});
