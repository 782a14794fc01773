// Every route of the API, walked with four tokens under default_policy=deny: management, read-only
// (read on every resource), one scoped to the service `web` (write on web, read on nodes, so its
// instances are visible), and anonymous. Statuses are asserted for all, and what lists show is the
// management answer filtered by what the token may read (consul-behaviour §2.9–2.10).
// A route missing from CASES fails the first test: a new route needs an entry here.
import { routeList } from '../../src/http/routes';
import type { Reply } from '../support/dev-agent';
import { MASTER, startAclAgent, tokenWithRules, type AclAgent } from './acl-agent';

type Who = 'management' | 'readOnly' | 'webOnly' | 'anonymous';
const WHO: Who[] = ['management', 'readOnly', 'webOnly', 'anonymous'];

/**
 * A status; 'allowed': anything but 401/403 (the call got past ACLs; what happens next is the
 * area's business); 'hidden': 403 or 404 (a single object the token may not read is not shown).
 */
type Outcome = number | 'allowed' | 'hidden';

interface Case {
  /** `${method} ${path}` exactly as the route declares it. */
  route: string;
  /** Concrete URL (may depend on who asks, e.g. unique names). */
  url: string | ((who: Who) => string | Promise<string>);
  body?: unknown | ((who: Who) => unknown);
  /** Expected outcome for [management, readOnly, webOnly, anonymous]. */
  status: [Outcome, Outcome, Outcome, Outcome];
  /** For reads: what `who` should see, given management's answer. */
  sees?: (who: Who, all: any) => unknown;
  /** Applied to every answer before comparing (e.g. to undo a random order). */
  normalize?: (json: any) => any;
}

const READ_ONLY_RULES = `
acl = "read"
operator = "read"
agent_prefix "" { policy = "read" }
event_prefix "" { policy = "read" }
key_prefix "" { policy = "read" }
node_prefix "" { policy = "read" }
query_prefix "" { policy = "read" }
service_prefix "" { policy = "read" }
session_prefix "" { policy = "read" }
`;
const WEB_RULES = `
service "web" { policy = "write" }
node_prefix "" { policy = "read" }
`;

const NODE = 'acl-agent';
const UNKNOWN = 'deadbeef-0000-4000-8000-000000000000';
const SPIFFE_DB = 'spiffe://11111111-2222-3333-4444-555555555555.registry/ns/default/dc/dc1/svc/db';

const COORD = { Vec: [0.001, 0, 0, 0, 0, 0, 0, 0], Error: 1.5, Adjustment: 0, Height: 0.0001 };

const ALL: Case['status'] = [200, 200, 200, 200];
const READERS: Case['status'] = [200, 200, 403, 403];
const MANAGERS: Case['status'] = [200, 403, 403, 403];
const WEB_WRITERS: Case['status'] = [200, 403, 200, 403];
const WEB_READERS: Case['status'] = [200, 200, 200, 403];

/** Which nodes and services each token may read. */
const nodeVisible = (who: Who) => who !== 'anonymous';
const serviceVisible = (who: Who, name: string) => who === 'management' || who === 'readOnly' || (who === 'webOnly' && name === 'web');
const checkVisible = (who: Who, c: { Node: string; ServiceName: string }) =>
  nodeVisible(who) && (c.ServiceName === '' || serviceVisible(who, c.ServiceName));
const everythingOrNothing = (who: Who, all: any, nothing: unknown) => (who === 'anonymous' ? nothing : all);
const filterMap = (m: Record<string, any>, keep: (k: string, v: any) => boolean) =>
  Object.fromEntries(Object.entries(m).filter(([k, v]) => keep(k, v)));

let a: AclAgent;
const secrets: Record<Who, string | undefined> = { management: MASTER, readOnly: undefined, webOnly: undefined, anonymous: undefined };
const ids: Record<string, string> = {};
let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}`;

async function ok(r: Promise<Reply>, what: string): Promise<Reply> {
  const res = await r;
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res;
}
const mgmt = (method: string, path: string, body?: unknown) => ok(a.as(MASTER, method, path, body), `${method} ${path}`);

async function newIntention(source: string, destination: string): Promise<string> {
  return (await mgmt('POST', '/v1/connect/intentions', { SourceName: source, DestinationName: destination, Action: 'allow' })).json.ID;
}
async function newSession(): Promise<string> {
  return (await mgmt('PUT', '/v1/session/create', { Node: 'n1', Checks: [] })).json.ID;
}

const CASES: Case[] = [
  // ---- catalog ----
  // Same node fields as registered: only service:write on web is needed.
  { route: 'PUT /v1/catalog/register', url: '/v1/catalog/register', body: { Node: 'n1', Address: '10.0.0.1', Service: { ID: 'web1', Service: 'web', Port: 80 } }, status: WEB_WRITERS },
  {
    route: 'PUT /v1/catalog/deregister',
    url: async () => {
      await mgmt('PUT', '/v1/catalog/register', { Node: 'n1', Address: '10.0.0.1', Service: { ID: 'web-tmp', Service: 'web' } });
      return '/v1/catalog/deregister';
    },
    body: { Node: 'n1', ServiceID: 'web-tmp' },
    status: WEB_WRITERS,
  },
  { route: 'GET /v1/catalog/datacenters', url: '/v1/catalog/datacenters', status: ALL, sees: (_w, all) => all },
  { route: 'GET /v1/catalog/nodes', url: '/v1/catalog/nodes', status: ALL, sees: (w, all) => all.filter((n: any) => nodeVisible(w) && n) },
  { route: 'GET /v1/catalog/services', url: '/v1/catalog/services', status: ALL, sees: (w, all) => filterMap(all, (name) => serviceVisible(w, name)) },
  { route: 'GET /v1/catalog/service{/:service}', url: '/v1/catalog/service/web', status: ALL, sees: (w, all) => all.filter((s: any) => nodeVisible(w) && serviceVisible(w, s.ServiceName)) },
  // The proxy's own name (web-proxy) is what decides, as in Consul: the web-scoped token sees none.
  { route: 'GET /v1/catalog/connect{/:service}', url: '/v1/catalog/connect/web', status: ALL, sees: (w, all) => all.filter((s: any) => nodeVisible(w) && serviceVisible(w, s.ServiceName)) },
  {
    route: 'GET /v1/catalog/node{/:node}',
    url: '/v1/catalog/node/n1',
    status: ALL,
    sees: (w, all) => (nodeVisible(w) ? { ...all, Services: filterMap(all.Services, (_id, s) => serviceVisible(w, s.Service)) } : null),
  },

  // ---- health ----
  { route: 'GET /v1/health/node{/:node}', url: '/v1/health/node/n1', status: ALL, sees: (w, all) => all.filter((c: any) => checkVisible(w, c)) },
  { route: 'GET /v1/health/checks{/:service}', url: '/v1/health/checks/web', status: ALL, sees: (w, all) => all.filter((c: any) => checkVisible(w, c)) },
  { route: 'GET /v1/health/service{/:service}', url: '/v1/health/service/web', status: ALL, sees: (w, all) => all.filter((e: any) => nodeVisible(w) && serviceVisible(w, e.Service.Service)) },
  { route: 'GET /v1/health/connect{/:service}', url: '/v1/health/connect/web', status: ALL, sees: (w, all) => all.filter((e: any) => nodeVisible(w) && serviceVisible(w, e.Service.Service)) },
  { route: 'GET /v1/health/state{/:state}', url: '/v1/health/state/any', status: ALL, sees: (w, all) => all.filter((c: any) => checkVisible(w, c)) },

  // ---- status, operator, agent ----
  { route: 'GET /v1/status/leader', url: '/v1/status/leader', status: ALL },
  { route: 'GET /v1/status/peers', url: '/v1/status/peers', status: ALL },
  { route: 'GET /v1/operator/raft/configuration', url: '/v1/operator/raft/configuration', status: READERS },
  // Snapshots are management's (acl = "write"); a body that is no archive is refused after the ACL check.
  { route: 'GET /v1/snapshot', url: '/v1/snapshot', status: [200, 403, 403, 403] },
  { route: 'PUT /v1/snapshot', url: '/v1/snapshot', body: 'not an archive', status: [400, 403, 403, 403] },
  { route: 'DELETE /v1/operator/raft/peer', url: `/v1/operator/raft/peer?id=${UNKNOWN}`, status: ['allowed', 403, 403, 403] },
  { route: 'POST /v1/operator/raft/transfer-leader', url: '/v1/operator/raft/transfer-leader', status: ['allowed', 403, 403, 403] },
  { route: 'POST /v1/operator/raft/promote', url: `/v1/operator/raft/promote?id=${UNKNOWN}`, status: ['allowed', 403, 403, 403] },
  { route: 'GET /v1/agent/self', url: '/v1/agent/self', status: READERS },
  { route: 'GET /v1/agent/metrics', url: '/v1/agent/metrics?format=prometheus', status: READERS },
  { route: 'GET /v1/agent/members', url: '/v1/agent/members', status: ALL, sees: (w, all) => all.filter(() => nodeVisible(w)) },
  { route: 'PUT /v1/agent/join/:address', url: '/v1/agent/join/127.0.0.1:1', status: ['allowed', 403, 403, 403] },
  // agent:write on this node; the in-process agent re-applies its running configuration.
  { route: 'PUT /v1/agent/reload', url: '/v1/agent/reload', status: MANAGERS },

  // ---- ACL ----
  { route: 'PUT /v1/acl/bootstrap', url: '/v1/acl/bootstrap', status: [403, 403, 403, 403] },
  { route: 'GET /v1/acl/token/self', url: '/v1/acl/token/self', status: [200, 200, 200, 403] },
  {
    route: 'GET /v1/acl/token{/:accessor}',
    url: () => `/v1/acl/token/${ids.anonymousAccessor}`,
    status: READERS,
    sees: (w, all) => (w === 'readOnly' ? { ...all, SecretID: '<hidden>' } : all),
  },
  { route: 'PUT /v1/acl/token{/:accessor}', url: '/v1/acl/token', body: { Description: 'walk' }, status: MANAGERS },
  { route: 'PUT /v1/acl/token/:accessor/clone', url: () => `/v1/acl/token/${ids.anonymousAccessor}/clone`, status: MANAGERS },
  {
    route: 'DELETE /v1/acl/token{/:accessor}',
    url: async () => `/v1/acl/token/${(await mgmt('PUT', '/v1/acl/token', { Description: 'doomed' })).json.AccessorID}`,
    status: MANAGERS,
  },
  { route: 'GET /v1/acl/tokens', url: '/v1/acl/tokens', status: READERS },
  { route: 'GET /v1/acl/policy{/:id}', url: '/v1/acl/policy/00000000-0000-0000-0000-000000000001', status: READERS, sees: (_w, all) => all },
  { route: 'PUT /v1/acl/policy{/:id}', url: '/v1/acl/policy', body: () => ({ Name: unique('walk') }), status: MANAGERS },
  { route: 'DELETE /v1/acl/policy{/:id}', url: `/v1/acl/policy/${UNKNOWN}`, status: MANAGERS },
  { route: 'GET /v1/acl/policies', url: '/v1/acl/policies', status: READERS, sees: (_w, all) => all },
  // No token needed (Consul's ACL.ReplicationStatus): a primary answers Enabled: false.
  { route: 'GET /v1/acl/replication', url: '/v1/acl/replication', status: ALL, sees: (_w, all) => all },
  // The legacy API (Consul 1.4's acl_endpoint_legacy.go): writes and the list are management's;
  // info needs nothing but the secret; translation needs acl:read.
  { route: 'PUT /v1/acl/create', url: '/v1/acl/create', body: { Name: 'walk', Rules: 'key "walk/" { policy = "read" }' }, status: MANAGERS },
  { route: 'PUT /v1/acl/update', url: '/v1/acl/update', body: () => ({ ID: unique('walk-legacy'), Name: 'walk' }), status: MANAGERS },
  { route: 'PUT /v1/acl/destroy{/:id}', url: '/v1/acl/destroy/walk-unknown', status: MANAGERS },
  { route: 'GET /v1/acl/info{/:id}', url: '/v1/acl/info/walk-unknown', status: ALL, sees: (_w, all) => all },
  { route: 'PUT /v1/acl/clone{/:id}', url: `/v1/acl/clone/${MASTER}`, status: MANAGERS },
  { route: 'GET /v1/acl/list', url: '/v1/acl/list', status: MANAGERS },
  { route: 'POST /v1/acl/rules/translate', url: '/v1/acl/rules/translate', body: 'key "" { policy = "read" }', status: READERS },
  {
    route: 'GET /v1/acl/rules/translate{/:accessor}',
    url: async () => {
      const id = (await mgmt('PUT', '/v1/acl/create', { Rules: 'key "" { policy = "read" }' })).json.ID;
      return `/v1/acl/rules/translate/${(await ok(a.as(id, 'GET', '/v1/acl/token/self'), 'self')).json.AccessorID}`;
    },
    status: READERS,
  },

  // ---- intentions (intentions:read/write on the destination) ----
  { route: 'GET /v1/connect/intentions/match', url: '/v1/connect/intentions/match?by=destination&name=web', status: WEB_READERS },
  { route: 'GET /v1/connect/intentions/check', url: '/v1/connect/intentions/check?source=db&destination=web', status: WEB_READERS },
  { route: 'GET /v1/connect/intentions', url: '/v1/connect/intentions', status: ALL, sees: (w, all) => all.filter((i: any) => serviceVisible(w, i.DestinationName)) },
  // service "web" write gives intentions read only (the default), so web may not create them.
  { route: 'POST /v1/connect/intentions', url: '/v1/connect/intentions', body: () => ({ SourceName: unique('src'), DestinationName: 'web', Action: 'allow' }), status: MANAGERS },
  { route: 'GET /v1/connect/intentions/:id', url: () => `/v1/connect/intentions/${ids.intentionToWeb}`, status: WEB_READERS },
  { route: 'PUT /v1/connect/intentions/:id', url: () => `/v1/connect/intentions/${ids.intentionToWeb}`, body: { SourceName: 'db', DestinationName: 'web', Action: 'deny' }, status: MANAGERS },
  { route: 'DELETE /v1/connect/intentions/:id', url: async () => `/v1/connect/intentions/${await newIntention(unique('gone'), 'web')}`, status: MANAGERS },

  // ---- CA and agent Connect ----
  { route: 'GET /v1/connect/ca/roots', url: '/v1/connect/ca/roots', status: ALL },
  { route: 'GET /v1/connect/ca/configuration', url: '/v1/connect/ca/configuration', status: READERS },
  { route: 'PUT /v1/connect/ca/configuration', url: '/v1/connect/ca/configuration', body: () => ids.caConfig, status: MANAGERS },
  { route: 'POST /v1/agent/connect/authorize', url: '/v1/agent/connect/authorize', body: { Target: 'web', ClientCertURI: SPIFFE_DB, ClientCertSerial: '01' }, status: WEB_WRITERS },
  { route: 'GET /v1/agent/connect/ca/roots', url: '/v1/agent/connect/ca/roots', status: ALL },
  { route: 'GET /v1/agent/connect/ca/leaf{/:service}', url: '/v1/agent/connect/ca/leaf/web', status: WEB_WRITERS },
  // An unknown proxy is 404 before any token check (Consul).
  { route: 'GET /v1/agent/connect/proxy{/:id}', url: '/v1/agent/connect/proxy/nope', status: [404, 404, 404, 404] },

  // ---- agent services ----
  { route: 'PUT /v1/agent/service/register', url: '/v1/agent/service/register', body: { Name: 'web', ID: 'web-agent' }, status: WEB_WRITERS },
  {
    route: 'PUT /v1/agent/service/deregister{/:id}',
    url: async () => {
      await mgmt('PUT', '/v1/agent/service/register', { Name: 'web', ID: 'web-agent-tmp' });
      return '/v1/agent/service/deregister/web-agent-tmp';
    },
    status: WEB_WRITERS,
  },
  { route: 'GET /v1/agent/services', url: '/v1/agent/services', status: ALL, sees: (w, all) => filterMap(all, (_id, s) => serviceVisible(w, s.Service)) },
  // The agent answers 404 (as for an unknown ID) where Consul answers 403; either way nothing is shown.
  { route: 'GET /v1/agent/service/:id', url: '/v1/agent/service/web-agent', status: [200, 200, 200, 'hidden'] },

  // ---- agent checks (service:write on the check's service; node:write on the agent's node for node checks) ----
  { route: 'PUT /v1/agent/check/register', url: '/v1/agent/check/register', body: () => ({ Name: unique('walk-check'), ServiceID: 'web-agent', TTL: '10m' }), status: WEB_WRITERS },
  {
    route: 'PUT /v1/agent/check/deregister{/:id}',
    url: async () => {
      const name = unique('walk-gone');
      await mgmt('PUT', '/v1/agent/check/register', { Name: name, ServiceID: 'web-agent', TTL: '10m' });
      return `/v1/agent/check/deregister/${name}`;
    },
    status: WEB_WRITERS,
  },
  { route: 'PUT /v1/agent/check/pass{/:id}', url: '/v1/agent/check/pass/web-ttl?note=ok', status: WEB_WRITERS },
  { route: 'PUT /v1/agent/check/warn{/:id}', url: '/v1/agent/check/warn/web-ttl', status: WEB_WRITERS },
  { route: 'PUT /v1/agent/check/fail{/:id}', url: '/v1/agent/check/fail/web-ttl', status: WEB_WRITERS },
  { route: 'PUT /v1/agent/check/update{/:id}', url: '/v1/agent/check/update/node-ttl', body: { Status: 'passing', Output: 'ok' }, status: MANAGERS },
  { route: 'GET /v1/agent/checks', url: '/v1/agent/checks', status: ALL, sees: (w, all) => filterMap(all, (_id, c) => checkVisible(w, c)) },

  // ---- sessions (session:read/write on the node) ----
  { route: 'PUT /v1/session/create', url: '/v1/session/create', body: { Node: 'n1', Checks: [] }, status: MANAGERS },
  { route: 'PUT /v1/session/destroy{/:id}', url: async () => `/v1/session/destroy/${await newSession()}`, status: MANAGERS },
  { route: 'PUT /v1/session/renew{/:id}', url: () => `/v1/session/renew/${ids.session}`, status: MANAGERS },
  {
    route: 'GET /v1/session/info{/:id}',
    url: () => `/v1/session/info/${ids.session}`,
    status: ALL,
    // A session the token may not read is answered like an unknown one: null (DECISIONS.md).
    sees: (w, all) => (w === 'management' || w === 'readOnly' ? all : null),
  },
  { route: 'GET /v1/session/node{/:node}', url: '/v1/session/node/n1', status: ALL, sees: (w, all) => (w === 'management' || w === 'readOnly' ? all : []) },
  { route: 'GET /v1/session/list', url: '/v1/session/list', status: ALL, sees: (w, all) => (w === 'management' || w === 'readOnly' ? all : []) },

  // ---- KV and transactions ----
  { route: 'GET /v1/kv{/*key}', url: '/v1/kv/app/config', status: READERS },
  { route: 'PUT /v1/kv{/*key}', url: (w) => `/v1/kv/app/${w}`, body: 'value', status: MANAGERS },
  { route: 'DELETE /v1/kv{/*key}', url: '/v1/kv/app/tmp', status: MANAGERS },
  { route: 'PUT /v1/txn', url: '/v1/txn', body: [{ KV: { Verb: 'set', Key: 'app/txn', Value: 'dg==' } }], status: MANAGERS },
  { route: 'POST /v1/txn', url: '/v1/txn', body: [{ KV: { Verb: 'set', Key: 'app/txn', Value: 'dg==' } }], status: MANAGERS },

  // ---- prepared queries (query:read/write on the Name) ----
  { route: 'POST /v1/query', url: '/v1/query', body: () => ({ Name: unique('q'), Service: { Service: 'web' } }), status: MANAGERS },
  { route: 'GET /v1/query', url: '/v1/query', status: ALL, sees: (w, all) => (w === 'management' || w === 'readOnly' ? all.map(redactToken(w)) : []) },
  { route: 'PUT /v1/query/:id', url: () => `/v1/query/${ids.query}`, body: { Name: 'q-web', Service: { Service: 'web' } }, status: MANAGERS },
  { route: 'GET /v1/query/:id', url: () => `/v1/query/${ids.query}`, status: READERS },
  { route: 'DELETE /v1/query/:id', url: async () => `/v1/query/${(await mgmt('POST', '/v1/query', { Name: unique('qd'), Service: { Service: 'web' } })).json.ID}`, status: MANAGERS },
  // No query ACL for execute: the results are filtered with the caller's token.
  {
    route: 'GET /v1/query/:id/execute',
    url: () => `/v1/query/${ids.query}/execute`,
    status: ALL,
    sees: (w, all) => ({ ...all, Nodes: all.Nodes.filter((e: any) => nodeVisible(w) && serviceVisible(w, e.Service.Service)) }),
    // Without `near` the nodes come shuffled.
    normalize: (json) => ({ ...json, Nodes: [...json.Nodes].sort((x: any, y: any) => (x.Service.ID < y.Service.ID ? -1 : 1)) }),
  },
  { route: 'GET /v1/query/:id/explain', url: () => `/v1/query/${ids.query}/explain`, status: READERS },

  // ---- network areas (operator:read/write) and coordinates (node:read/write) ----
  { route: 'POST /v1/operator/area', url: '/v1/operator/area', body: () => ({ PeerDatacenter: unique('peer') }), status: MANAGERS },
  { route: 'GET /v1/operator/area', url: '/v1/operator/area', status: READERS },
  { route: 'PUT /v1/operator/area/:id', url: () => `/v1/operator/area/${ids.area}`, body: { UseTLS: true }, status: MANAGERS },
  { route: 'GET /v1/operator/area/:id', url: () => `/v1/operator/area/${ids.area}`, status: READERS },
  {
    route: 'DELETE /v1/operator/area/:id',
    url: async () => `/v1/operator/area/${(await mgmt('POST', '/v1/operator/area', { PeerDatacenter: unique('gone') })).json.ID}`,
    status: MANAGERS,
  },
  // Nothing listens on port 1: management gets 200 with a failed join.
  { route: 'PUT /v1/operator/area/:id/join', url: () => `/v1/operator/area/${ids.area}/join`, body: ['127.0.0.1:1'], status: ['allowed', 403, 403, 403] },
  { route: 'GET /v1/operator/area/:id/members', url: () => `/v1/operator/area/${ids.area}/members`, status: READERS },
  { route: 'GET /v1/coordinate/datacenters', url: '/v1/coordinate/datacenters', status: ALL },
  { route: 'GET /v1/coordinate/nodes', url: '/v1/coordinate/nodes', status: ALL, sees: (w, all) => all.filter(() => nodeVisible(w)) },
  { route: 'GET /v1/coordinate/node{/:node}', url: '/v1/coordinate/node/n1', status: WEB_READERS },
  { route: 'PUT /v1/coordinate/update', url: '/v1/coordinate/update', body: { Node: 'n1', Coord: COORD }, status: MANAGERS },

  // ---- agent lifecycle, user events, autopilot (issue 15) ----
  { route: 'GET /v1/agent/health/service/id{/:id}', url: '/v1/agent/health/service/id/web-agent', status: ['allowed', 'allowed', 'allowed', 403] },
  { route: 'GET /v1/agent/health/service/name{/:name}', url: '/v1/agent/health/service/name/web', status: ['allowed', 'allowed', 'allowed', 403] },
  { route: 'PUT /v1/agent/maintenance', url: '/v1/agent/maintenance?enable=false', status: MANAGERS },
  { route: 'PUT /v1/agent/service/maintenance{/:id}', url: '/v1/agent/service/maintenance/web-agent?enable=false', status: WEB_WRITERS },
  { route: 'PUT /v1/agent/token{/:kind}', url: '/v1/agent/token/replication', body: { Token: '' }, status: MANAGERS },
  { route: 'PUT /v1/agent/force-leave{/:node}', url: '/v1/agent/force-leave/nobody', status: ['allowed', 403, 403, 403] },
  // A bad level ends the stream at once for those allowed past the ACL check (agent:read).
  { route: 'GET /v1/agent/monitor', url: '/v1/agent/monitor?loglevel=bogus', status: [400, 400, 403, 403] },
  { route: 'GET /v1/agent/host', url: '/v1/agent/host', status: READERS },
  { route: 'PUT /v1/event/fire{/:name}', url: '/v1/event/fire/walk', body: 'payload', status: MANAGERS },
  { route: 'GET /v1/event/list', url: '/v1/event/list', status: ALL, sees: (w, all) => (w === 'management' || w === 'readOnly' ? all : []) },
  { route: 'GET /v1/operator/autopilot/configuration', url: '/v1/operator/autopilot/configuration', status: READERS },
  {
    route: 'PUT /v1/operator/autopilot/configuration',
    url: '/v1/operator/autopilot/configuration',
    body: { CleanupDeadServers: true, LastContactThreshold: '200ms', MaxTrailingLogs: 250, ServerStabilizationTime: '10s' },
    status: MANAGERS,
  },
  { route: 'GET /v1/operator/autopilot/health', url: '/v1/operator/autopilot/health', status: READERS },

  // Last: a management token makes the agent leave.
  { route: 'PUT /v1/agent/leave', url: '/v1/agent/leave', status: [200, 403, 403, 403] },
];

function redactToken(w: Who) {
  return (q: any) => (w === 'management' ? q : { ...q, Token: q.Token === '' ? '' : '<hidden>' });
}

beforeAll(async () => {
  a = await startAclAgent({ defaultPolicy: 'deny' });
  secrets.readOnly = (await tokenWithRules(a, 'read-only', READ_ONLY_RULES)).secret;
  secrets.webOnly = (await tokenWithRules(a, 'web-only', WEB_RULES)).secret;
  ids.anonymousAccessor = '00000000-0000-0000-0000-000000000002';

  await mgmt('PUT', '/v1/catalog/register', {
    Node: 'n1',
    Address: '10.0.0.1',
    Service: { ID: 'web1', Service: 'web', Port: 80 },
    Checks: [
      { CheckID: 'web-check', Name: 'web', ServiceID: 'web1', Status: 'passing' },
      { CheckID: 'n1-check', Name: 'node', Status: 'passing' },
    ],
  });
  await mgmt('PUT', '/v1/catalog/register', { Node: 'n1', Address: '10.0.0.1', Service: { ID: 'db1', Service: 'db' }, Check: { CheckID: 'db-check', Name: 'db', ServiceID: 'db1' } });
  await mgmt('PUT', '/v1/catalog/register', {
    Node: 'n1',
    Address: '10.0.0.1',
    Service: { ID: 'web-proxy1', Service: 'web-proxy', Kind: 'connect-proxy', Port: 21000, Proxy: { DestinationServiceName: 'web' } },
  });
  await mgmt('PUT', '/v1/kv/app/config', 'x');
  await mgmt('PUT', '/v1/agent/service/register', { Name: 'web', ID: 'web-agent' });
  await mgmt('PUT', '/v1/agent/service/register', { Name: 'db', ID: 'db-agent' });
  await mgmt('PUT', '/v1/agent/check/register', { Name: 'web-ttl', ServiceID: 'web-agent', TTL: '10m' });
  await mgmt('PUT', '/v1/agent/check/register', { Name: 'db-ttl', ServiceID: 'db-agent', TTL: '10m' });
  await mgmt('PUT', '/v1/agent/check/register', { Name: 'node-ttl', TTL: '10m' });
  ids.intentionToWeb = await newIntention('db', 'web');
  await newIntention('web', 'db');
  ids.session = await newSession();
  ids.query = (await mgmt('POST', '/v1/query', { Name: 'q-web', Service: { Service: 'web' } })).json.ID;
  ids.caConfig = (await mgmt('GET', '/v1/connect/ca/configuration')).json;
  ids.area = (await mgmt('POST', '/v1/operator/area', { PeerDatacenter: 'walk-peer' })).json.ID;
  await mgmt('PUT', '/v1/coordinate/update', { Node: 'n1', Coord: COORD });
}, 30_000);
afterAll(() => a.stop());

test('every route of the API has an entry (add one here for a new route)', () => {
  const declared = routeList().map((r) => `${r.method} ${r.path}`).sort();
  const covered = [...new Set(CASES.map((c) => c.route))].sort();
  expect(covered).toEqual(declared);
});

describe.each(CASES.map((c) => [c.route, c] as const))('%s', (_route, c) => {
  test('status per token, and what each token sees', async () => {
    const results: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    let all: any;
    for (const [i, who] of WHO.entries()) {
      const url = typeof c.url === 'function' ? await c.url(who) : c.url;
      const body = typeof c.body === 'function' ? (c.body as (w: Who) => unknown)(who) : c.body;
      const [method] = c.route.split(' ');
      const r = await a.as(secrets[who], method, url, body);
      const want = c.status[i];
      const allowed =
        want === 'allowed' ? r.status !== 401 && r.status !== 403 : want === 'hidden' ? r.status === 403 || r.status === 404 : r.status === want;
      results[who] = allowed ? want : `${r.status} ${r.text.slice(0, 120)}`;
      expected[who] = want;
      if (c.sees && r.status === 200) {
        const json = c.normalize ? c.normalize(r.json) : r.json;
        if (who === 'management') all = json;
        results[`${who} sees`] = json;
        expected[`${who} sees`] = c.sees(who, all);
      }
    }
    expect(results).toEqual(expected);
  });
});
