// A store holding `mib` MiB of 4 KiB KV values applied as a server applies them (stamped commands,
// 256 distinct random values), and its snapshot written through Raft's own file store (WalStorage,
// as a server keeps it). Shared by restore-cpu.js, restore-fresh.js and take-cost.js.
'use strict';
const { randomBytes, randomUUID } = require('node:crypto');
const { join } = require('node:path');
const { WalStorage, LevelStorage } = require('../../packages/raft/dist/index.js');
const { Store, encodeStamped, decodeEntry } = require('../../packages/store/dist/index.js');

/** A server's Raft storage in `dir`. */
const storageAt = (dir) => new WalStorage({ dir: join(dir, 'wal'), snapshots: new LevelStorage({ path: join(dir, 'db') }) });

/** Request ids as packages/server's RequestIds makes them: one proposer's random prefix, then a base-36 sequence. */
function serverRequestIds() {
  const prefix = randomBytes(6).toString('base64url');
  return (i) => `${prefix}.${(i + 1).toString(36)}`;
}

/**
 * A store with ceil(mib MiB / 4 KiB) values big/00000000…; returns it and the count. `storeBuild`:
 * packages/store's exports (another tree's build, for an A/B); `requestId(i)`: the i-th command's
 * request id (default a random UUID each, which the window keeps outside any proposer's lane).
 */
function filledStore(mib, { storeBuild = { Store, encodeStamped, decodeEntry }, requestId = () => randomUUID() } = {}) {
  const count = Math.ceil((mib * 2 ** 20) / 4096);
  const store = new storeBuild.Store({ datacenter: 'dc1' });
  const values = Array.from({ length: 256 }, () => randomBytes(4096));
  let at = Date.now();
  for (let i = 0; i < count; i++) {
    const cmd = { type: 'kv.apply', op: { Verb: 'set', Key: `big/${String(i).padStart(8, '0')}`, Value: values[i % 256], Flags: 0 } };
    const { cmd: c, request } = storeBuild.decodeEntry(storeBuild.encodeStamped(cmd, requestId(i), at++, false));
    store.apply(i + 1, c, request);
  }
  return { store, count };
}

/** Writes `store`'s snapshot at index `count` into `storage` (opened here, left open). */
async function writeSnapshot(storage, store, count) {
  await storage.load();
  const meta = { index: count, term: 1, configuration: { servers: [{ id: 'a', address: '127.0.0.1:1' }] } };
  const sink = await storage.createSnapshot(meta, count);
  const handle = store.openSnapshot();
  await handle.persistTo(sink);
  await sink.commit();
  handle.release();
}

module.exports = { storageAt, filledStore, serverRequestIds, writeSnapshot };
