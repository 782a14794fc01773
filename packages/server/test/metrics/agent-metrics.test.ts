// GET /v1/agent/metrics on a dev agent: the Prometheus form scraped and parsed by a real
// text-format parser, the series moving when load is applied, and the JSON form in Consul's shape.
import { hostname } from 'node:os';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';
import { countOf, labelSetsOf, scrape, typeOf, valueOf } from './scrape';

jest.setTimeout(60_000);

const SNAPSHOT_THRESHOLD = 40;

describe('Prometheus form', () => {
  let a: TestAgent;
  beforeAll(async () => {
    a = await startDevAgent((c) => {
      c.raft.snapshotThreshold = SNAPSHOT_THRESHOLD;
      c.raft.snapshotIntervalMs = 0; // every threshold entries, not on the 30 s interval
    });
  });
  afterAll(() => a.stop());

  test('is text exposition 0.0.4 and has every documented series with its type', async () => {
    const s = await scrape(a.url);
    expect(s.status).toBe(200);
    expect(s.contentType).toContain('version=0.0.4');
    const expected: Record<string, string> = {
      registry_raft_commit_time_seconds: 'HISTOGRAM',
      registry_raft_apply_time_seconds: 'HISTOGRAM',
      registry_raft_apply_total: 'COUNTER',
      registry_raft_commits_total: 'COUNTER',
      registry_raft_leader_changes_total: 'COUNTER',
      registry_raft_state_leader_total: 'COUNTER',
      registry_raft_leader_last_contact_seconds: 'GAUGE',
      registry_raft_last_index: 'GAUGE',
      registry_raft_commit_index: 'GAUGE',
      registry_raft_applied_index: 'GAUGE',
      registry_raft_snapshot_duration_seconds: 'HISTOGRAM',
      registry_raft_snapshot_size_bytes: 'GAUGE',
      registry_server_is_leader: 'GAUGE',
      registry_fsm_apply_seconds: 'HISTOGRAM',
      registry_rpc_forwarded_total: 'COUNTER',
      registry_rpc_forward_errors_total: 'COUNTER',
      registry_rpc_queries_blocking: 'GAUGE',
      registry_http_request_duration_seconds: 'HISTOGRAM',
      registry_state_nodes: 'GAUGE',
      registry_state_services: 'GAUGE',
      registry_state_checks: 'GAUGE',
      registry_state_kv_entries: 'GAUGE',
      registry_state_sessions: 'GAUGE',
      registry_acl_resolve_token_seconds: 'HISTOGRAM',
      registry_acl_token_cache_hits_total: 'COUNTER',
      registry_acl_token_cache_misses_total: 'COUNTER',
      registry_ca_leaf_signed_total: 'COUNTER',
      registry_runtime_heap_used_bytes: 'GAUGE',
      registry_runtime_heap_total_bytes: 'GAUGE',
      registry_runtime_external_bytes: 'GAUGE',
      registry_runtime_rss_bytes: 'GAUGE',
      registry_runtime_event_loop_delay_seconds: 'GAUGE',
      // prom-client's default metrics.
      process_resident_memory_bytes: 'GAUGE',
      nodejs_heap_size_used_bytes: 'GAUGE',
      nodejs_eventloop_lag_seconds: 'GAUGE',
    };
    const got = Object.fromEntries(Object.keys(expected).map((name) => [name, typeOf(s.families, name)]));
    expect(got).toEqual(expected);
    expect(valueOf(s.families, 'registry_server_is_leader')).toBe(1);
    expect(valueOf(s.families, 'registry_state_nodes')).toBe(1);
    expect(valueOf(s.families, 'registry_runtime_heap_used_bytes')).toBeGreaterThan(1_000_000);
    expect(valueOf(s.families, 'registry_runtime_heap_total_bytes')).toBeGreaterThanOrEqual(valueOf(s.families, 'registry_runtime_heap_used_bytes')!);
    expect(valueOf(s.families, 'registry_runtime_external_bytes')).toBeGreaterThan(0);
    expect(valueOf(s.families, 'registry_runtime_event_loop_delay_seconds', { stat: 'p99' })).toBeGreaterThanOrEqual(0);
    expect(valueOf(s.families, 'registry_raft_leader_changes_total')).toBeGreaterThanOrEqual(1);
    // A dev agent is a cluster of one: no follower to have heard from, nothing forwarded.
    expect(s.families.find((f) => f.name === 'registry_raft_leader_last_contact_seconds')?.metrics).toEqual([]);
    expect(valueOf(s.families, 'registry_rpc_forwarded_total', { kind: 'write' })).toBe(0);
  });

  test('KV writes raise the apply, commit and FSM counts, the KV key gauge, the Raft indexes and the route histogram', async () => {
    const s0 = await scrape(a.url);
    const before = s0.families;
    const puts = 5;
    for (let i = 0; i < puts; i++) expect((await http(a.url, 'PUT', `/v1/kv/metrics/put-${i}`, 'v')).status).toBe(200);
    const lastIndex = Number((await http(a.url, 'GET', `/v1/kv/metrics/put-${puts - 1}`)).headers.get('x-registry-index'));
    expect(lastIndex).toBeGreaterThan(0);
    const s1 = await scrape(a.url);
    const after = s1.families;
    expect(valueOf(after, 'registry_state_kv_entries')! - valueOf(before, 'registry_state_kv_entries')!).toBe(puts);
    expect(valueOf(after, 'registry_raft_apply_total')! - valueOf(before, 'registry_raft_apply_total')!).toBeGreaterThanOrEqual(puts);
    expect(valueOf(after, 'registry_raft_commits_total')! - valueOf(before, 'registry_raft_commits_total')!).toBeGreaterThanOrEqual(puts);
    expect(countOf(s1, 'registry_raft_commit_time_seconds') - countOf(s0, 'registry_raft_commit_time_seconds')).toBeGreaterThanOrEqual(1);
    expect(countOf(s1, 'registry_raft_apply_time_seconds') - countOf(s0, 'registry_raft_apply_time_seconds')).toBeGreaterThanOrEqual(1);
    expect(countOf(s1, 'registry_fsm_apply_seconds', { type: 'kv.apply' }) - countOf(s0, 'registry_fsm_apply_seconds', { type: 'kv.apply' })).toBe(puts);
    const route = { method: 'PUT', route: '/v1/kv{/*key}', code: '200' };
    expect(countOf(s1, 'registry_http_request_duration_seconds', route) - countOf(s0, 'registry_http_request_duration_seconds', route)).toBe(puts);
    for (const name of ['registry_raft_last_index', 'registry_raft_commit_index', 'registry_raft_applied_index']) {
      expect([name, valueOf(after, name)! >= lastIndex]).toEqual([name, true]);
    }
  });

  test('the route histogram is labelled by route pattern and status, never by the raw path', async () => {
    expect((await http(a.url, 'GET', '/v1/kv/metrics/no-such-key-1')).status).toBe(404);
    expect((await http(a.url, 'GET', '/v1/kv/metrics/no-such-key-2')).status).toBe(404);
    expect((await http(a.url, 'PUT', '/v1/catalog/register', '{not json')).status).toBe(400);
    const s = await scrape(a.url);
    expect(countOf(s, 'registry_http_request_duration_seconds', { method: 'GET', route: '/v1/kv{/*key}', code: '404' })).toBe(2);
    expect(countOf(s, 'registry_http_request_duration_seconds', { method: 'PUT', route: '/v1/catalog/register', code: '400' })).toBe(1);
    const routes = labelSetsOf(s, 'registry_http_request_duration_seconds').map((l) => l.route);
    expect(routes.length).toBeGreaterThan(3);
    expect(routes.filter((r) => r === undefined || r.includes('no-such-key'))).toEqual([]);
  });

  test('an open blocking query raises the blocking gauge, and it falls back when the client leaves', async () => {
    expect((await http(a.url, 'PUT', '/v1/kv/metrics/watched', 'v')).status).toBe(200);
    const index = Number((await http(a.url, 'GET', '/v1/kv/metrics/watched')).headers.get('x-registry-index'));
    expect(index).toBeGreaterThan(0);
    const client = new AbortController();
    const blocked = fetch(`${a.url}/v1/kv/metrics/watched?index=${index}&wait=30s`, { signal: client.signal }).catch(() => undefined);
    await waitFor(async () => valueOf((await scrape(a.url)).families, 'registry_rpc_queries_blocking') === 1, 10_000);
    client.abort();
    await blocked;
    await waitFor(async () => valueOf((await scrape(a.url)).families, 'registry_rpc_queries_blocking') === 0, 10_000);
  });

  test('signing a leaf certificate raises the CA counter', async () => {
    await waitFor(async () => (await http(a.url, 'GET', '/v1/connect/ca/roots')).json?.ActiveRootID !== '', 10_000);
    const before = valueOf((await scrape(a.url)).families, 'registry_ca_leaf_signed_total')!;
    const leaf = await http(a.url, 'GET', '/v1/agent/connect/ca/leaf/metrics-web');
    expect(leaf.status).toBe(200);
    const after = valueOf((await scrape(a.url)).families, 'registry_ca_leaf_signed_total')!;
    expect(after - before).toBe(1);
  });

  test('enough writes take a snapshot: its duration is observed and its size reported', async () => {
    for (let i = 0; i < SNAPSHOT_THRESHOLD + 5; i++) await http(a.url, 'PUT', `/v1/kv/metrics/snap-${i}`, 'v');
    await waitFor(async () => countOf(await scrape(a.url), 'registry_raft_snapshot_duration_seconds') >= 1, 10_000);
    expect(valueOf((await scrape(a.url)).families, 'registry_raft_snapshot_size_bytes')).toBeGreaterThan(0);
  });

  test('table gauges follow the catalog and sessions', async () => {
    const before = (await scrape(a.url)).families;
    const reg = await http(a.url, 'PUT', '/v1/catalog/register', {
      Node: 'metrics-node',
      Address: '10.0.0.9',
      Service: { Service: 'metrics-svc', Port: 80 },
      Check: { CheckID: 'metrics-check', Name: 'c', Status: 'passing' },
    });
    expect(reg.status).toBe(200);
    const session = await http(a.url, 'PUT', '/v1/session/create', { Node: 'metrics-node', Checks: [] });
    expect(session.status).toBe(200);
    const after = (await scrape(a.url)).families;
    const delta = (name: string) => valueOf(after, name)! - valueOf(before, name)!;
    expect({ nodes: delta('registry_state_nodes'), services: delta('registry_state_services'), checks: delta('registry_state_checks'), sessions: delta('registry_state_sessions') }).toEqual({
      nodes: 1,
      services: 1,
      checks: 1,
      sessions: 1,
    });
  });
});

describe('JSON form', () => {
  let a: TestAgent;
  beforeAll(async () => {
    a = await startDevAgent();
  });
  afterAll(() => a.stop());

  test("has Consul's shape: Timestamp, Gauges, Points, Counters, Samples; gauges named without the hostname, as Consul 1.4 with no push sink", async () => {
    await http(a.url, 'PUT', '/v1/kv/json-form', 'v');
    const r = await http(a.url, 'GET', '/v1/agent/metrics');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('application/json');
    const m = r.json;
    expect(Object.keys(m).sort()).toEqual(['Counters', 'Gauges', 'Points', 'Samples', 'Timestamp']);
    expect(m.Timestamp).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d0 \+0000 UTC$/);
    expect(m.Points).toEqual([]);
    const kv = m.Gauges.find((g: any) => g.Name === 'registry.state.kv_entries');
    expect(kv).toEqual({ Name: 'registry.state.kv_entries', Value: 1, Labels: {} });
    expect(m.Gauges.filter((g: any) => g.Name.includes(`.${hostname()}.`))).toEqual([]);
    for (const g of m.Gauges) expect(Object.keys(g).sort()).toEqual(['Labels', 'Name', 'Value']);
  });

  test('a request shows in Samples with count, sum, min, max, mean and stddev (ms) in the interval shown', async () => {
    let sample: any;
    // The interval shown is the last finished one (10 s, as Consul's in-memory sink): poll for it.
    await waitFor(async () => {
      await http(a.url, 'GET', '/v1/status/leader');
      const m = (await http(a.url, 'GET', '/v1/agent/metrics')).json;
      sample = m.Samples.find((s: any) => s.Name === 'registry.http.request' && s.Labels.route === '/v1/status/leader');
      return sample !== undefined;
    }, 25_000, 500);
    expect(Object.keys(sample).sort()).toEqual(['Count', 'Labels', 'Max', 'Mean', 'Min', 'Name', 'Rate', 'Stddev', 'Sum']);
    expect(sample.Labels).toEqual({ method: 'GET', route: '/v1/status/leader', code: '200' });
    expect(sample.Count).toBeGreaterThanOrEqual(1);
    expect(sample.Min).toBeLessThanOrEqual(sample.Mean);
    expect(sample.Mean).toBeLessThanOrEqual(sample.Max);
    expect(sample.Sum).toBeCloseTo(sample.Mean * sample.Count, 6);
    expect(sample.Stddev).toBeGreaterThanOrEqual(0);
  });
});

describe('telemetry settings', () => {
  let a: TestAgent;
  beforeAll(async () => {
    a = await startDevAgent((c) => {
      c.telemetry = { disableHostname: true, prometheusRetentionMs: 0 };
    });
  });
  afterAll(() => a.stop());

  test('prometheus_retention_time 0 refuses the Prometheus format with 415, as Consul does', async () => {
    const s = await scrape(a.url);
    expect(s.status).toBe(415);
    expect(s.text).toBe('Prometheus is not enabled since its retention time is not positive');
  });

  test('disable_hostname keeps gauge names without the hostname', async () => {
    const m = (await http(a.url, 'GET', '/v1/agent/metrics')).json;
    const names = m.Gauges.map((g: any) => g.Name);
    expect(names).toContain('registry.state.nodes');
    expect(names.filter((n: string) => n.includes(hostname()))).toEqual([]);
  });
});
