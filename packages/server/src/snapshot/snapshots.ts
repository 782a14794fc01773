// Backups (GET/PUT /v1/snapshot). Saving takes a point-in-time handle on the store (the same one
// Raft's own snapshots use, serialised in slices off the apply path) on the leader — or on this
// server with ?stale — spools it to a file (snapshot-spool.ts) and streams the archive of
// archive.ts made from it. Restoring checks the archive here, before anything is proposed, then
// commits one `snapshot.restore` command through Raft, so every server installs the same state at
// the same log index (docs/operations.md "Backups" says why a log entry rather than an
// InstallSnapshot).
//
// Before proposing, the state bytes go to every server of the Raft configuration ('snapshot.prepare'),
// which decodes and loads them in slices of a few ms beside its other work (Store.prepareRestore):
// applying the entry then swaps the prepared state in. Rebuilding 100,000 nodes inside the apply
// froze every server's event loop for seconds. A server that could not prepare in time (down, slow,
// restarting and replaying its log) rebuilds the state at apply, from the entry's own bytes, as before:
// both ways give the state of the same bytes, so every server still ends identical.
import type { RaftNode, Transport } from '@registry/raft';
import type { Store } from '@registry/store';
import { badRequest, noLeader } from '../errors';
import type { Rpc } from '../rpc/rpc';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { ArchiveError, archiveOf, archiveStream, readArchiveStream, sha256Hex, type ArchiveMeta } from './archive';
import { spoolSnapshot } from './snapshot-spool';
import { receiveUpload } from './archive-upload';
import { monotonicMs } from '../time';

/** A state saved on some server: its bytes and where in the log it stands. */
export interface SavedState {
  state: Uint8Array;
  index: number;
  term: number;
}

declare module '../rpc/leader-calls' {
  interface LeaderMethods {
    'Snapshot.Save': { args: null; reply: SavedState };
  }
}

/** Saving 100k nodes through a follower: the leader's bytes cross the server port in one frame. */
const SAVE_TIMEOUT_MS = 60_000;

/**
 * A restore's write budget: the usual 7 s plus 1 s per MiB of state (a 100k-node state is ~47 MiB;
 * on a loaded 2-core server its copy to the followers, LevelDB write and load take several seconds),
 * capped at 10 minutes. With the usual 7 s such a restore could answer 500 "outcome unknown" while it
 * was still being applied.
 */
export function restoreBudgetMs(stateBytes: number): number {
  return Math.min(600_000, 7_000 + Math.ceil(stateBytes / (1 << 20)) * 1_000);
}

export interface SnapshotDeps {
  store: Store;
  raft: RaftNode;
  rpc: Rpc;
  datacenter: string;
  /** The server port, to have the other servers prepare a restore; without it only this one does. */
  transport?: Transport;
  /** Where an uploaded archive is written while it is checked (archive-upload.ts). */
  dataDir: string;
  /** Largest archive a restore accepts (`snapshot_restore_max_bytes`); a reload changes it (`reload`). */
  maxArchiveBytes: number;
  logger?: { info(o: object, msg: string): void; warn(o: object, msg: string): void };
}

/** What a server is sent to prepare a restore: the state bytes and `sha256:<hex>` of them. */
interface PrepareRequest {
  key: string;
  state: Uint8Array;
}

const PREPARE = 'snapshot.prepare';
/** A prepared state no entry took is dropped after this long (it holds a whole second state). */
const PREPARED_TTL_MS = 10 * 60_000;

export class Snapshots {
  private readonly expiry = new Map<string, NodeJS.Timeout>();

  private maxArchiveBytes: number;

  /** A reload's `snapshot_restore_max_bytes` (agent/reload.ts): the next restore's bound. */
  reload(maxArchiveBytes: number): void {
    this.maxArchiveBytes = maxArchiveBytes;
  }

  constructor(private readonly d: SnapshotDeps) {
    this.maxArchiveBytes = d.maxArchiveBytes;
    d.rpc.leader.handle('Snapshot.Save', () => this.saveHere());
    d.transport?.handle(PREPARE, (body) => this.prepareHere(body as PrepareRequest).then(() => true));
  }

  /** Drops the prepared states kept here (agent shutdown). */
  stop(): void {
    for (const [key, timer] of this.expiry) {
      clearTimeout(timer);
      this.d.store.discardPrepared(key);
    }
    this.expiry.clear();
  }

  /**
   * The archive of the whole state, the leader's (or with `stale` this server's), as a stream. A
   * state saved here is serialised in pieces into a file in the data dir, hashed as it goes, and the
   * archive is made from that file as it is sent (snapshot-spool.ts); a follower gets the leader's
   * bytes in one reply and makes the archive from them. Either way nothing copies the state whole.
   */
  async save(stale: boolean): Promise<{ archive: Readable; meta: { index: number; term: number; lastContactMs: number } }> {
    const at = (s: { index: number; term: number }) => ({ index: s.index, term: s.term, datacenter: this.d.datacenter });
    // How long since this server heard from the leader when the state was taken: 0 for the
    // leader's own (as Consul's setQueryMeta); Go's client derives KnownLeader/LastContact from it.
    let lastContactMs = 0;
    if (stale && !this.d.raft.hasEverHadLeader()) throw noLeader();
    if (stale || this.d.raft.isLeader()) {
      const spool = await spoolSnapshot(this.d.store, this.d.dataDir, (index) => this.termAt(index));
      if (stale) {
        const ms = this.d.raft.lastContactMs();
        lastContactMs = Number.isFinite(ms) ? Math.max(0, Math.floor(ms)) : 0;
      }
      try {
        const archive = await archiveStream(spool, at(spool));
        archive.once('close', () => void spool.remove());
        return { archive, meta: { index: spool.index, term: spool.term, lastContactMs } };
      } catch (err) {
        await spool.remove();
        throw err;
      }
    }
    const saved = await this.d.rpc.leader.call('Snapshot.Save', null, SAVE_TIMEOUT_MS);
    const archive = await archiveOf(saved.state, at(saved));
    return { archive, meta: { index: saved.index, term: saved.term, lastContactMs } };
  }

  /**
   * Replace the cluster's state by the archive arriving as `body` (the caller has already decided,
   * from the request's headers, that its sender may). The archive goes to a file in the data dir
   * (archive-upload.ts, at most `maxArchiveBytes`), is read back strictly and every checksum
   * verified (archive.ts); a damaged or hostile archive is refused (400) before any proposal, so
   * nothing changes, and the file is removed whatever happens. The ACL check of the write runs
   * again on the leader (management only).
   */
  async restore(body: Readable, declaredLength: number | null, token: string | undefined): Promise<ArchiveMeta> {
    const upload = await receiveUpload(body, this.d.dataDir, this.maxArchiveBytes, declaredLength);
    let read: { meta: ArchiveMeta; state: Buffer };
    try {
      if (upload.bytes === 0) throw new ArchiveError('snapshot archive is empty');
      read = await readArchiveStream(createReadStream(upload.path, { highWaterMark: 64 * 1024 }));
    } catch (err) {
      if (err instanceof ArchiveError) throw badRequest(err.message);
      throw err;
    } finally {
      await upload.remove();
    }
    return this.restoreState(read, token);
  }

  /** The checked state goes to every server, then through Raft as one entry. */
  private async restoreState(read: { meta: ArchiveMeta; state: Buffer }, token: string | undefined): Promise<ArchiveMeta> {
    const budgetMs = restoreBudgetMs(read.state.length);
    const key = read.meta.Checksum;
    // The state bytes are decoded here too: bytes that are not a state (an archive with good sums
    // around a bad state.bin) are refused now, before anything is proposed, as every server would.
    const refused = await this.prepareEverywhere({ key, state: read.state }, budgetMs / 2);
    if (refused) throw badRequest(`snapshot restore refused: ${refused.message}`);
    await this.d.rpc.apply({ type: 'snapshot.restore', state: read.state, prepared: key }, { token, budgetMs });
    return read.meta;
  }

  /**
   * Every server of the configuration prepares the state (this one included), each in its own slices.
   * Waits until all have answered, but once this server is done, only twice as long again for the
   * others (at least 2 s): a server that is down or cut off must not hold the restore. A server that
   * did not answer in time may still finish before the entry reaches it; failing that it rebuilds the
   * state when the entry applies. Returns why this server could not prepare it (the bytes are not a
   * state: every server would refuse the entry), or null.
   */
  private async prepareEverywhere(req: PrepareRequest, timeoutMs: number): Promise<Error | null> {
    const started = monotonicMs();
    const servers = this.d.raft.configuration();
    const self = this.prepareHere(req);
    let selfError: Error | null = null;
    self.catch((err: unknown) => void (selfError = err instanceof Error ? err : new Error(String(err))));
    const ready = servers.map(() => false);
    const settled = servers.map((s, i) =>
      (s.id === this.d.raft.id || !this.d.transport ? self : this.d.transport.call(s.address, PREPARE, req, timeoutMs)).then(
        () => void (ready[i] = true),
        () => undefined,
      ),
    );
    let grace: NodeJS.Timeout | undefined;
    const graceMs = () => Math.max(2_000, 2 * (monotonicMs() - started));
    const enough = self.then(
      () => new Promise<void>((resolve) => (grace = setTimeout(resolve, graceMs()))),
      () => new Promise<void>((resolve) => (grace = setTimeout(resolve, 1_000))),
    );
    await Promise.race([Promise.all(settled), enough]);
    clearTimeout(grace);
    const count = `${ready.filter(Boolean).length}/${servers.length}`;
    if (!ready.every(Boolean)) this.d.logger?.warn({ prepared: count }, 'snapshot restore: not every server prepared the state in time; the others rebuild it when the entry applies');
    this.d.logger?.info({ prepared: count, ms: monotonicMs() - started }, 'snapshot restore: state prepared ahead of the entry');
    // Settled by now: `enough` waits for it.
    await self.catch(() => undefined);
    return selfError;
  }

  /** Prepare a restore's state here, once its bytes are checked against their key. */
  private async prepareHere(req: PrepareRequest): Promise<void> {
    if (typeof req?.key !== 'string' || !(req.state instanceof Uint8Array)) throw badRequest('snapshot.prepare needs a key and state bytes');
    // The key names the bytes the entry will carry: prepared bytes that differ would part this server from the others.
    if (`sha256:${await sha256Hex(req.state)}` !== req.key) throw badRequest('snapshot.prepare: the state does not match its checksum');
    await this.d.store.prepareRestore(req.key, req.state);
    const old = this.expiry.get(req.key);
    if (old) clearTimeout(old);
    const timer = setTimeout(() => {
      this.expiry.delete(req.key);
      this.d.store.discardPrepared(req.key);
    }, PREPARED_TTL_MS);
    timer.unref();
    this.expiry.set(req.key, timer);
  }

  /** The leader's state for a follower's save, in one reply (Snapshot.Save). */
  private async saveHere(): Promise<SavedState> {
    const handle = this.d.store.openSnapshot();
    try {
      const state = await handle.persist();
      return { state, index: handle.index, term: this.termAt(handle.index) };
    } finally {
      handle.release();
    }
  }

  /**
   * The term of the entry a saved state stands at (Consul's meta Term), not the current term: a
   * leader elected since has a higher one, which the saved state never saw.
   */
  private termAt(index: number): number {
    return this.d.raft.termAt(index) ?? this.d.raft.term();
  }
}
