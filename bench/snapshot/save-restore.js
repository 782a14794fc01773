// Backup save and restore times (GET/PUT /v1/snapshot) for a store of N catalog nodes (one service
// and one check each), on one in-process dev agent (Raft with one voter: the restore entry is
// written to LevelDB and applied, as on every server of a cluster, without the network copy).
// Reports, per size: save wall time (request to last byte), archive and state sizes, restore wall
// time (request to 200), and the longest event-loop stall seen during each (10 ms interval pings).
// Usage:
//   npx tsc -b packages/cli && node bench/snapshot/save-restore.js [--nodes 10000,100000] [--runs 3]
'use strict';
const { resolve } = require('node:path');
const { performance } = require('node:perf_hooks');
const os = require('node:os');
const { stallMeter } = require('../support');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const sizes = opt('nodes', '10000,100000').split(',').map(Number);
const runs = Number(opt('runs', '3'));
const { Agent, buildConfig, createLogger } = require(resolve(__dirname, '../../packages/server/dist'));

async function fill(agent, n) {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const req = {
        Node: `node-${i}`, Address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
        Service: { ID: `web-${i}`, Service: 'web', Port: 8080, Tags: ['v1'] },
        Check: { CheckID: `web-${i}-alive`, Name: 'alive', Status: 'passing', ServiceID: `web-${i}` },
      };
      await agent.rpc.apply({ type: 'catalog.register', req }, { internal: true });
    }
  };
  await Promise.all(Array.from({ length: 128 }, worker));
}

async function main() {
  console.log(`# ${new Date().toISOString()} node ${process.version}, ${os.cpus().length} cores, load average before: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const n of sizes) {
    const config = buildConfig({ dev: true, httpPort: 0, serverPort: 0, dnsPort: -1, node: 'bench' });
    const agent = await Agent.start(config, { logger: createLogger('silent', false) });
    const url = `http://127.0.0.1:${agent.httpPort}`;
    while ((await (await fetch(`${url}/v1/status/leader`)).json()) === '') await new Promise((r) => setTimeout(r, 50));
    const t0 = performance.now();
    await fill(agent, n);
    console.log(`nodes=${n} filled in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    for (let r = 0; r < runs; r++) {
      let meter = stallMeter();
      let t = performance.now();
      const res = await fetch(`${url}/v1/snapshot`);
      const archive = Buffer.from(await res.arrayBuffer());
      const saveMs = performance.now() - t;
      const saveStall = meter.stop();
      if (res.status !== 200) throw new Error(`save: ${res.status} ${archive.toString()}`);
      meter = stallMeter();
      t = performance.now();
      const put = await fetch(`${url}/v1/snapshot`, { method: 'PUT', body: archive });
      const text = await put.text();
      const restoreMs = performance.now() - t;
      const restoreStall = meter.stop();
      if (put.status !== 200) throw new Error(`restore: ${put.status} ${text}`);
      const count = (await (await fetch(`${url}/v1/catalog/service/web`)).json()).length;
      if (count !== n) throw new Error(`restored ${count} instances, expected ${n}`);
      console.log(
        `nodes=${n} run=${r + 1} save=${saveMs.toFixed(0)} ms (max stall ${saveStall.toFixed(0)} ms) archive=${(archive.length / 1048576).toFixed(2)} MiB ` +
          `restore=${restoreMs.toFixed(0)} ms (max stall ${restoreStall.toFixed(0)} ms) load=${os.loadavg()[0].toFixed(2)}`,
      );
    }
    await agent.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
