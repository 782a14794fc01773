// A single-server cluster in its own process, for the crash test (run against the built dist).
// CRASH_STORAGE=wal runs it on WalStorage (small segments, so kills land in rolls and removals too),
// anything else on LevelStorage.
//   node crash-child.js write <dir> <prefix>  propose "<prefix>v<n>" from 8 writers forever, print "ack v<n>" per acknowledgement
//   node crash-child.js verify <dir>  restart from <dir>, wait until everything committed is applied,
//                                     print the applied values as one JSON line, exit
'use strict';
const { join } = require('node:path');
const { LevelStorage, RaftNode, TcpTransport, WalStorage } = require('../../dist/index.js');

const [mode, dir, prefix = ''] = process.argv.slice(2);

class ListFsm {
  constructor() {
    this.items = [];
  }
  apply(_index, data) {
    this.items.push(Buffer.from(data).toString());
    return this.items.length;
  }
  snapshot() {
    return Buffer.from(JSON.stringify(this.items));
  }
  restore(data) {
    this.items = JSON.parse(Buffer.from(data).toString());
  }
}

async function main() {
  const transport = await TcpTransport.listen({ host: '127.0.0.1', port: 0 });
  const fsm = new ListFsm();
  // A small snapshot threshold so the kill also lands during snapshots and compactions.
  const node = await RaftNode.create({
    id: 'solo',
    storage:
      process.env.CRASH_STORAGE === 'wal'
        ? new WalStorage({ dir: join(dir, 'wal'), snapshots: new LevelStorage({ path: join(dir, 'snapshots') }), segmentBytes: 2048 })
        : new LevelStorage({ path: dir }),
    transport,
    fsm,
    tickMs: 20,
    snapshotThreshold: 150,
    trailingLogs: 20,
  });
  await node.bootstrap([{ id: 'solo', address: transport.address }]);
  node.start();
  const deadline = Date.now() + 10000;
  while (!node.leaderReady()) {
    if (Date.now() > deadline) throw new Error('no leader');
    await new Promise((r) => setTimeout(r, 5));
  }
  if (mode === 'verify') {
    await node.readBarrier(5000);
    process.stdout.write(JSON.stringify(fsm.items) + '\n');
    await node.stop();
    await transport.close();
    return;
  }
  let next = 0;
  const writer = async () => {
    for (;;) {
      const value = `${prefix}v${next++}`;
      await node.propose(Buffer.from(value));
      process.stdout.write(`ack ${value}\n`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, writer));
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack) + '\n');
  process.exit(1);
});
