// For chunked-snapshot.test.ts: saves a first snapshot, then streams a second one into LevelStorage
// piece by piece without ever committing it, printing "pieces <n>" as it goes, until it is killed.
// Runs against the built dist (`npx tsc -b packages/raft`).
'use strict';
const { LevelStorage } = require('../../dist/index.js');

const meta = (index, term) => ({ index, term, configuration: { servers: [{ id: 'a', address: '127.0.0.1:1' }] } });

async function main() {
  const storage = new LevelStorage({ path: process.argv[2] });
  await storage.load();
  await storage.saveSnapshot(meta(4, 1), Buffer.from('first snapshot, committed'), Infinity);
  const sink = storage.createSnapshot(meta(40, 1), Infinity);
  const piece = Buffer.alloc(64 << 10, 0x61);
  for (let n = 1; ; n++) {
    await sink.write(piece);
    process.stdout.write(`pieces ${n}\n`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
