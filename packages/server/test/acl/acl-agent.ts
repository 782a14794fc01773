// An in-process dev agent with ACLs on, ready once the leader has created the built-ins and the
// initial management token (the shared startDevAgent waits on reads that ACLs may filter).
import { Agent, buildConfig, createLogger, type AgentConfig } from '@registry/server';
import { http, tokenResolves, waitFor, type Reply } from '../support/dev-agent';

export const MASTER = 'c0ffee00-0000-4000-8000-000000000001';

export interface AclAgent {
  agent: Agent;
  url: string;
  stop(): Promise<void>;
  /** A request with `token` in X-Registry-Token (none when undefined). */
  as(token: string | undefined, method: string, path: string, body?: unknown): Promise<Reply>;
}

export async function startAclAgent(
  opts: {
    defaultPolicy?: 'allow' | 'deny';
    master?: string | null;
    patch?: (c: AgentConfig) => void;
    /** A secondary datacenter without tokens of its own reads them in its primary: do not wait on them. */
    noTokenReads?: boolean;
  } = {},
): Promise<AclAgent> {
  const config = buildConfig({ dev: true, httpPort: 0, serverPort: 0, node: 'acl-agent' });
  config.acl.enabled = true;
  config.acl.defaultPolicy = opts.defaultPolicy ?? 'allow';
  if (opts.master !== null) config.acl.tokens.initialManagement = opts.master ?? MASTER;
  opts.patch?.(config);
  const agent = await Agent.start(config, { logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false) });
  const url = `http://127.0.0.1:${agent.httpPort}`;
  const as = (token: string | undefined, method: string, path: string, body?: unknown) =>
    http(url, method, path, body, token === undefined ? {} : { 'X-Registry-Token': token });
  const master = config.acl.tokens.initialManagement;
  await waitFor(async () => (await as(undefined, 'GET', '/v1/status/leader')).json !== '', 10_000);
  // Built-ins exist once the anonymous token resolves through `self`.
  if (!opts.noTokenReads) await waitFor(() => tokenResolves(url, 'anonymous'), 10_000);
  if (master) await waitFor(() => tokenResolves(url, master), 10_000);
  // The leader has registered its own node.
  if (master) await waitFor(async () => (await as(master, 'GET', `/v1/catalog/node/${config.nodeName}`)).json !== null, 10_000);
  return { agent, url, as, stop: () => agent.stop() };
}

/** Create a policy and a token linking it; returns the token's secret. */
export async function tokenWithRules(a: AclAgent, name: string, rules: string): Promise<{ secret: string; accessor: string; policyId: string }> {
  const p = await a.as(MASTER, 'PUT', '/v1/acl/policy', { Name: name, Rules: rules });
  if (p.status !== 200) throw new Error(`policy ${name}: ${p.status} ${p.text}`);
  const t = await a.as(MASTER, 'PUT', '/v1/acl/token', { Description: name, Policies: [{ ID: p.json.ID }] });
  if (t.status !== 200) throw new Error(`token ${name}: ${t.status} ${t.text}`);
  return { secret: t.json.SecretID, accessor: t.json.AccessorID, policyId: p.json.ID };
}
