// Issue #28: `primary_datacenter` (and Consul's deprecated `acl_datacenter`), `acl.tokens.replication`
// (and `acl_replication_token`) and `acl.enable_token_replication`, read from real config files and
// seen in GET /v1/acl/replication; a primary (the default: the agent's own datacenter) replicates nothing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, buildConfig, createLogger } from '@registry/server';
import { http, waitFor } from '../support/dev-agent';

jest.setTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-primary-dc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
async function replicationOf(content: Record<string, unknown>): Promise<{ status: number; json: any }> {
  const path = join(dir, `config-${++n}.json`);
  writeFileSync(path, JSON.stringify({ ...content, acl: { enabled: true, default_policy: 'deny', ...((content.acl as object) ?? {}) } }));
  const config = buildConfig({ dev: true, httpPort: 0, serverPort: 0, node: `primary-dc-${n}`, configFile: [path] });
  const agent = await Agent.start(config, { logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false) });
  try {
    const url = `http://127.0.0.1:${agent.httpPort}`;
    await waitFor(async () => (await (await fetch(`${url}/v1/status/leader`)).json()) !== '', 10_000);
    // Running once the leader's duties have started.
    let r = await http(url, 'GET', '/v1/acl/replication');
    await waitFor(async () => {
      r = await http(url, 'GET', '/v1/acl/replication');
      return r.status !== 200 || !r.json.Enabled || r.json.Running;
    }, 10_000);
    return { status: r.status, json: r.json };
  } finally {
    await agent.stop();
  }
}

test('primary_datacenter names the source; acl.enable_token_replication makes it replicate tokens too', async () => {
  const r = await replicationOf({ datacenter: 'dc2', primary_datacenter: 'dc1', acl: { enable_token_replication: true, tokens: { replication: 'r' } } });
  expect(r.status).toBe(200);
  expect(r.json).toMatchObject({ Enabled: true, Running: true, SourceDatacenter: 'dc1', ReplicationType: 'tokens' });
});

test('acl_datacenter is the deprecated name; without token replication only policies replicate', async () => {
  const r = await replicationOf({ datacenter: 'dc3', acl_datacenter: 'dc1', acl_replication_token: 'r' });
  expect(r.json).toMatchObject({ Enabled: true, SourceDatacenter: 'dc1', ReplicationType: 'policies' });
});

test('by default the primary is the agent’s own datacenter, which replicates nothing', async () => {
  const r = await replicationOf({ datacenter: 'dc4' });
  expect(r.json).toMatchObject({ Enabled: false, Running: false, SourceDatacenter: '', ReplicationType: '' });
  const same = await replicationOf({ datacenter: 'dc5', primary_datacenter: 'dc5' });
  expect(same.json.Enabled).toBe(false);
});

test('ACLs off: 401 ACL support disabled, as every ACL endpoint', async () => {
  const path = join(dir, 'off.json');
  writeFileSync(path, JSON.stringify({ primary_datacenter: 'dc1', datacenter: 'dc2' }));
  const agent = await Agent.start(buildConfig({ dev: true, httpPort: 0, serverPort: 0, node: 'acl-off', configFile: [path] }), { logger: createLogger('silent', false) });
  try {
    const r = await http(`http://127.0.0.1:${agent.httpPort}`, 'GET', '/v1/acl/replication');
    expect([r.status, r.text]).toEqual([401, 'ACL support disabled']);
  } finally {
    await agent.stop();
  }
});
