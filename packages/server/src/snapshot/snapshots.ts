// Backups (GET/PUT /v1/snapshot). Saving takes a point-in-time handle on the store (the same one
// Raft's own snapshots use, serialised in slices off the apply path) on the leader — or on this
// server with ?stale — spools it to a file (snapshot-spool.ts) and streams the archive of
// archive.ts made from it. Restoring checks the archive here as it is unpacked into a file, before
// anything is proposed, stages that state file on every server, each loading it in slices
// (restore-staging.ts), then commits one `snapshot.restore` entry naming it through Raft, so every
// server swaps in the same state at the same log index (docs/operations.md "Backups" says why a log
// entry rather than an InstallSnapshot, and why the entry does not carry the state).
import type { RaftNode } from '@registry/raft';
import type { Store } from '@registry/store';
import { badRequest, noLeader } from '../errors';
import type { Rpc } from '../rpc/rpc';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { ArchiveError, MAX_STATE_BYTES, archiveOf, archiveStream, extractArchive, type ArchiveMeta } from './archive';
import { spoolSnapshot } from './snapshot-spool';
import { receiveUpload } from './archive-upload';
import type { RestoreStaging } from './restore-staging';
import { UPLOAD_DIR, scratchFile } from './scratch-dirs';

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
  /** Where a restore's state is staged on every server and loaded ahead of its entry. */
  staging: RestoreStaging;
  /** Where an uploaded archive is written while it is checked (archive-upload.ts). */
  dataDir: string;
  /** Largest archive a restore accepts (`snapshot_restore_max_bytes`); a reload changes it (`reload`). */
  maxArchiveBytes: number;
  logger?: { info(o: object, msg: string): void; warn(o: object, msg: string): void };
}

export class Snapshots {
  private maxArchiveBytes: number;

  /** A reload's `snapshot_restore_max_bytes` (agent/reload.ts): the next restore's bound. */
  reload(maxArchiveBytes: number): void {
    this.maxArchiveBytes = maxArchiveBytes;
  }

  constructor(private readonly d: SnapshotDeps) {
    this.maxArchiveBytes = d.maxArchiveBytes;
    d.rpc.leader.handle('Snapshot.Save', () => this.saveHere());
  }

  /** Drops the loaded states kept here (agent shutdown). */
  stop(): void {
    this.d.staging.stop();
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
   * (archive-upload.ts, at most `maxArchiveBytes`), is unpacked strictly with every checksum verified
   * and its state written to a file of its own (archive.ts); a damaged or hostile archive is refused
   * (400) before any proposal, so nothing changes. The state file is staged on every server and
   * loaded there (restore-staging.ts) — bytes that do not decode are refused here, before the
   * proposal, as every server would refuse them — and one small entry naming it goes through Raft.
   * The ACL check of the write runs again on the leader (management only).
   */
  async restore(body: Readable, declaredLength: number | null, token: string | undefined): Promise<ArchiveMeta> {
    const upload = await receiveUpload(body, this.d.dataDir, this.maxArchiveBytes, declaredLength);
    const state = await scratchFile(this.d.dataDir, UPLOAD_DIR, 'state', '.bin');
    let meta: ArchiveMeta;
    try {
      if (upload.bytes === 0) throw new ArchiveError('snapshot archive is empty');
      // The state may be as large as the archive allowed (it was never in one frame or entry): a
      // server whose snapshot_restore_max_bytes is raised restores states beyond the default bound.
      meta = await extractArchive(createReadStream(upload.path, { highWaterMark: 64 * 1024 }), state.path, Math.max(MAX_STATE_BYTES, this.maxArchiveBytes));
      await this.d.staging.adopt(state.path, meta.Checksum);
    } catch (err) {
      await state.remove();
      if (err instanceof ArchiveError) throw badRequest(err.message);
      throw err;
    } finally {
      await upload.remove();
    }
    const budgetMs = restoreBudgetMs(meta.Size);
    const refused = await this.d.staging.stageEverywhere(meta.Checksum, meta.Size, budgetMs / 2);
    if (refused) throw badRequest(`snapshot restore refused: ${refused.message}`);
    await this.d.rpc.apply({ type: 'snapshot.restore', staged: meta.Checksum, bytes: meta.Size }, { token, budgetMs });
    return meta;
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
