// The pieces bench/catalog-scale/run.js drives a three-server cluster with: bench/support.js's
// startCluster (scripts/cluster.sh on free ports in a temp folder) warmed with a KV write, a
// loopback-only HTTP call, the servers' RSS, and the agent's JSON metrics. Only processes cluster.sh
// started (by their recorded pid) are ever signalled.
'use strict';
const { readFileSync } = require('node:fs');
const support = require('../support');

const call = support.loopbackCaller({ maxSockets: 64, timeoutMs: 30_000 });

/** VmRSS of a pid in MiB (NaN once it is gone). */
function rssMiB(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  } catch {
    return NaN;
  }
}

/** The agent's JSON metrics, as { gauges: name-suffix → value (first of its name), samples: name-suffix → sample }. */
async function metrics(base) {
  const r = await call(base, 'GET', '/v1/agent/metrics', undefined, 10_000);
  if (r.status !== 200) throw new Error(`metrics: ${r.status}`);
  const m = JSON.parse(r.body.toString());
  // Gauge names carry the hostname after `registry.` unless disabled: keep the part after it.
  const key = (name) => name.replace(/^registry\.(?:[^.]+\.)?(?=(runtime|raft|state|rpc|server)\.)/, '');
  const gauges = {};
  for (const g of m.Gauges) {
    const k = key(g.Name) + (g.Labels && g.Labels.stat ? `.${g.Labels.stat}` : '');
    if (!(k in gauges)) gauges[k] = g.Value;
  }
  const samples = {};
  for (const s of m.Samples) samples[key(s.Name)] = s;
  return { timestamp: m.Timestamp, gauges, samples };
}

const startCluster = ({ keepLogs } = {}) =>
  support.startCluster({ call, prefix: 'bench-catalog-scale-', warm: { path: '/v1/kv/bench-warm', body: 'x' }, keepLogs });

module.exports = { call, startCluster, rssMiB, metrics, REPO: support.REPO };
