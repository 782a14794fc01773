// An in-process dev agent on ephemeral ports, driven only through HTTP.
import { Agent, buildConfig, createLogger, type AgentConfig } from '@registry/server';

export interface TestAgent {
  agent: Agent;
  url: string;
  stop(): Promise<void>;
}

export async function startDevAgent(patch: (c: AgentConfig) => void = () => undefined): Promise<TestAgent> {
  const config = buildConfig({ dev: true, httpPort: 0, serverPort: 0, node: 'test-agent' });
  patch(config);
  const agent = await Agent.start(config, { logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false) });
  const url = `http://127.0.0.1:${agent.httpPort}`;
  await waitFor(async () => (await (await fetch(`${url}/v1/status/leader`)).json()) !== '', 10_000);
  // Ready once the leader has put this agent's own node in the catalog.
  // (Asked of the store itself: under default_policy=deny an anonymous HTTP read would not see it.)
  await waitFor(() => agent.store.catalogNode(config.nodeName).value !== null, 10_000);
  // And, with ACLs on, once the leader has written the initial management token: until then a
  // request with it is 403 "ACL not found", as in Consul (whose test agents wait for it too).
  const management = config.acl.enabled ? config.acl.tokens.initialManagement : undefined;
  if (management) await waitFor(() => tokenResolves(url, management), 10_000);
  return { agent, url, stop: () => agent.stop() };
}

/** Whether the agent at `url` resolves `token` (its `self` answers 200): the leader has written it. */
export async function tokenResolves(url: string, token: string): Promise<boolean> {
  return (await fetch(`${url}/v1/acl/token/self`, { headers: { 'X-Registry-Token': token } })).status === 200;
}

export async function waitFor(cond: () => Promise<boolean> | boolean, timeoutMs: number, stepMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await cond()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export async function http(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(url + path, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}
