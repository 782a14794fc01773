// For snapshot-files.test.ts: takes snapshots one after another into LevelStorage or WalStorage
// (argv: kind, folder), each of SIZE bytes all equal to index % 251, with log entries between them,
// printing "snap <index>" after each commit, until it is killed.
// Runs against the built dist (`npx tsc -b packages/raft`).
'use strict';
const { join } = require('node:path');
const { LevelStorage, WalStorage } = require('../../dist/index.js');

const SIZE = 3 << 20;
const meta = (index) => ({ index, term: 1, configuration: { servers: [{ id: 'a', address: '127.0.0.1:1' }] } });

async function main() {
  const [kind, dir] = process.argv.slice(2);
  const storage =
    kind === 'wal'
      ? new WalStorage({ dir: join(dir, 'wal'), snapshots: new LevelStorage({ path: join(dir, 'db') }), segmentBytes: 64 << 10 })
      : new LevelStorage({ path: join(dir, 'db') });
  const state = await storage.load();
  let index = state.entries.length ? state.entries[state.entries.length - 1].index : (state.snapshot?.meta.index ?? 0);
  const piece = Buffer.alloc(256 << 10);
  for (;;) {
    const entries = [];
    for (let i = 0; i < 20; i++) entries.push({ index: ++index, term: 1, type: 0, data: Buffer.from(`e${index}`) });
    await storage.append({ term: 1, vote: 'a', commit: index }, entries);
    const sink = storage.createSnapshot(meta(index), index - 5);
    piece.fill(index % 251);
    for (let at = 0; at < SIZE; at += piece.length) await sink.write(piece);
    await sink.commit();
    process.stdout.write(`snap ${index}\n`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
