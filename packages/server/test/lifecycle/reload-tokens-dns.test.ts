// SIGHUP reloads the agent's ACL tokens and its DNS settings (issue 11, Lifecycle), in the running
// process: a default token set in a config file is what anonymous HTTP requests and DNS lookups
// then use, and a changed dns_config.node_ttl is the TTL of the next answer.
import { Resolver } from 'node:dns/promises';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/processes';
import { eventually } from '../support/wait';
import { startAgentProc, whenReady, type AgentProc } from './agent-process';

jest.setTimeout(90_000);

const ROOT = 'c0ffee00-0000-4000-8000-0000000d15ad';

let dir: string;
let conf: string;
let agent: AgentProc;
let resolver: Resolver;

const base = (extra: { acl?: object; dns?: object }) => ({
  acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: ROOT, ...(extra.acl ?? {}) } },
  ...(extra.dns ? { dns_config: extra.dns } : {}),
});
const put = (content: unknown) => writeFileSync(join(conf, '00-base.json'), JSON.stringify(content));

async function anonymousNodes(): Promise<string[]> {
  const r = await fetch(`${agent.url}/v1/catalog/nodes`);
  return ((await r.json()) as { Node: string }[]).map((n) => n.Node);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-reload-dns-'));
  conf = join(dir, 'conf.d');
  mkdirSync(conf);
  put(base({}));
  const dnsPort = await freePort();
  agent = await startAgentProc(['-dev', '-node', 'reloaded', '-config-dir', conf, '-dns-port', String(dnsPort)], join(dir, 'agent.log'));
  await whenReady(agent, 'reloaded', ROOT);
  resolver = new Resolver({ timeout: 2_000, tries: 1 });
  resolver.setServers([`127.0.0.1:${dnsPort}`]);
});

afterAll(async () => {
  await agent?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a new default token and node_ttl take effect on SIGHUP, for HTTP and DNS alike', async () => {
  // Default deny, no default token: anonymous requests see no node, DNS finds none.
  expect(await anonymousNodes()).toEqual([]);
  await expect(resolver.resolve4('reloaded.node.registry')).rejects.toMatchObject({ code: 'ENOTFOUND' });

  put(base({ acl: { default: ROOT }, dns: { node_ttl: '30s' } }));
  agent.child.kill('SIGHUP');
  expect(await eventually(async () => (await anonymousNodes()).includes('reloaded'), 15_000)).toBe(true);
  // The log line is written just after the change is applied.
  expect(await eventually(() => /configuration reloaded: changed=.*acl\.tokens\.default.*dns_config/.test(agent.log()), 10_000)).toBe(true);
  const answer = await resolver.resolve4('reloaded.node.registry', { ttl: true });
  expect(answer).toHaveLength(1);
  expect(answer[0].ttl).toBe(30);
  // The token never reaches the log.
  expect(agent.log()).not.toContain(ROOT);
});
