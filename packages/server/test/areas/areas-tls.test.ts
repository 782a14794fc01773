// Network areas over TLS (issue 11, TLS): an area with UseTLS links its datacenters over TLS, and
// under verify_server_hostname a remote server must hold a certificate for server.<its dc>.registry
// (not this datacenter's name). Three single-server datacenters in one process, one CA:
//   dc1, dc2  TLS-only server ports (verify_incoming_rpc, verify_outgoing, verify_server_hostname)
//   dc3       a certificate (wrongly named server.dc1.registry) and no verify_* setting: its port
//             serves TLS and plain, and it dials other datacenters with TLS only when UseTLS says so.
import { rmSync } from 'node:fs';
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';
import { issue, makeCa, writePki } from '../tls/test-pki';

jest.setTimeout(90_000);

const ca = makeCa('registry test CA');
const pki = {
  dc1: writePki(ca, issue(ca, 'server.dc1.registry', ['server.dc1.registry'])),
  dc2: writePki(ca, issue(ca, 'server.dc2.registry', ['server.dc2.registry'])),
  dc3: writePki(ca, issue(ca, 'server.dc1.registry', ['server.dc1.registry'])),
};
let dc1: TestAgent;
let dc2: TestAgent;
let dc3: TestAgent;

function start(dc: 'dc1' | 'dc2' | 'dc3', strict: boolean): Promise<TestAgent> {
  return startDevAgent((c) => {
    c.datacenter = dc;
    c.nodeName = `node-${dc}`;
    c.tls = {
      ...c.tls,
      caFile: pki[dc].caFile,
      certFile: pki[dc].certFile,
      keyFile: pki[dc].keyFile,
      verifyIncomingRpc: strict,
      verifyOutgoing: strict,
      verifyServerHostname: strict,
    };
  });
}

beforeAll(async () => {
  [dc1, dc2, dc3] = await Promise.all([start('dc1', true), start('dc2', true), start('dc3', false)]);
}, 60_000);

afterAll(async () => {
  await Promise.all([dc1?.stop(), dc2?.stop(), dc3?.stop()]);
  for (const files of Object.values(pki)) rmSync(files.dir, { recursive: true, force: true });
});

async function area(a: TestAgent, peer: string, useTls: boolean): Promise<string> {
  const made = await http(a.url, 'POST', '/v1/operator/area', { PeerDatacenter: peer, UseTLS: useTls });
  expect(made.status).toBe(200);
  return made.json.ID as string;
}

async function join(a: TestAgent, id: string, to: TestAgent): Promise<{ Joined: boolean; Error: string }> {
  const r = await http(a.url, 'PUT', `/v1/operator/area/${id}/join`, [to.agent.self.address]);
  expect(r.status).toBe(200);
  return r.json[0];
}

test('two TLS datacenters link over TLS; each checks the other against server.<its dc>.registry', async () => {
  const a1 = await area(dc1, 'dc2', true);
  const a2 = await area(dc2, 'dc1', true);
  expect(await join(dc1, a1, dc2)).toMatchObject({ Joined: true, Error: '' });
  expect(await join(dc2, a2, dc1)).toMatchObject({ Joined: true, Error: '' });

  // Requests cross in both directions over those links.
  const put = await http(dc1.url, 'PUT', '/v1/kv/across-tls?dc=dc2', 'from-dc1');
  expect([put.status, put.text]).toEqual([200, 'true']);
  expect((await http(dc2.url, 'GET', '/v1/kv/across-tls?raw')).text).toBe('from-dc1');
  const back = await http(dc2.url, 'GET', '/v1/catalog/nodes?dc=dc1');
  expect(back.status).toBe(200);
  expect(back.json.map((n: { Node: string }) => n.Node)).toContain('node-dc1');
});

test('a remote server whose certificate names another datacenter is refused under verify_server_hostname', async () => {
  // dc3's certificate is from the same CA but says server.dc1.registry: right for dc1, wrong for dc3.
  const a = await area(dc1, 'dc3', true);
  const result = await join(dc1, a, dc3);
  expect(result.Joined).toBe(false);
  expect(result.Error).toMatch(/server\.dc3\.registry|altnames|certificate/i);
  expect((await http(dc1.url, 'GET', '/v1/kv/x?dc=dc3')).status).toBe(500);
});

test('UseTLS decides how a datacenter without verify_outgoing dials: plain is refused by a TLS-only peer, TLS is accepted', async () => {
  const a = await area(dc3, 'dc2', false);
  const plain = await join(dc3, a, dc2);
  expect(plain.Joined).toBe(false);

  expect((await http(dc3.url, 'PUT', `/v1/operator/area/${a}`, { UseTLS: true })).status).toBe(200);
  expect(await join(dc3, a, dc2)).toMatchObject({ Joined: true, Error: '' });
  const put = await http(dc3.url, 'PUT', '/v1/kv/from-dc3?dc=dc2', 'tls');
  expect([put.status, put.text]).toEqual([200, 'true']);
  expect((await http(dc2.url, 'GET', '/v1/kv/from-dc3?raw')).text).toBe('tls');

});
