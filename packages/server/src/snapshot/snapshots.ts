// Backups (GET/PUT /v1/snapshot). Saving takes a point-in-time handle on the store (the same one
// Raft's own snapshots use, serialised in slices off the apply path) on the leader — or on this
// server with ?stale — and wraps it in the archive of archive.ts. Restoring checks the archive
// here, before anything is proposed, then commits one `snapshot.restore` command through Raft, so
// every server installs the same state at the same log index (docs/operations.md "Backups" says
// why a log entry rather than an InstallSnapshot).
import type { RaftNode } from '@registry/raft';
import type { Store } from '@registry/store';
import { badRequest, noLeader } from '../errors';
import type { Rpc } from '../rpc/rpc';
import { ArchiveError, readArchive, writeArchive, type ArchiveMeta } from './archive';

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

export interface SnapshotDeps {
  store: Store;
  raft: RaftNode;
  rpc: Rpc;
  datacenter: string;
}

export class Snapshots {
  constructor(private readonly d: SnapshotDeps) {
    d.rpc.leader.handle('Snapshot.Save', () => this.saveHere());
  }

  /** The archive of the whole state: the leader's, or with `stale` this server's. */
  async save(stale: boolean): Promise<{ archive: Buffer; meta: { index: number; term: number } }> {
    let saved: SavedState;
    if (stale) {
      if (!this.d.raft.hasEverHadLeader()) throw noLeader();
      saved = await this.saveHere();
    } else {
      saved = await this.d.rpc.leader.call('Snapshot.Save', null, SAVE_TIMEOUT_MS);
    }
    const archive = await writeArchive(saved.state, { index: saved.index, term: saved.term, datacenter: this.d.datacenter });
    return { archive, meta: { index: saved.index, term: saved.term } };
  }

  /**
   * Replace the cluster's state by the archive's. A damaged archive is refused (400) before any
   * proposal, so nothing changes; the ACL check of the write runs on the leader (management only).
   */
  async restore(archive: Buffer, token: string | undefined): Promise<ArchiveMeta> {
    let read: { meta: ArchiveMeta; state: Buffer };
    try {
      read = await readArchive(archive);
    } catch (err) {
      if (err instanceof ArchiveError) throw badRequest(err.message);
      throw err;
    }
    await this.d.rpc.apply({ type: 'snapshot.restore', state: read.state }, { token });
    return read.meta;
  }

  private async saveHere(): Promise<SavedState> {
    const handle = this.d.store.openSnapshot();
    try {
      const state = await handle.persist();
      return { state, index: handle.index, term: this.d.raft.term() };
    } finally {
      handle.release();
    }
  }
}
