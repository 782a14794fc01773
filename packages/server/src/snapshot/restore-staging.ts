// A restore's state, staged on every server before its Raft entry is proposed (issue #34). The
// state of a backup may be hundreds of MiB; carried in one Raft entry it was copied whole into the
// proposal, the WAL write, every AppendEntries frame and each server's in-memory log, and the
// servers ended at four times the memory of the same state by replication. Instead the server that
// took the PUT writes the checked state to a file here (archive.ts extractArchive), sends it to each
// other server in pieces of 1 MiB ('snapshot.stage'), and each writes it to its own data dir,
// verifies its SHA-256 and loads it in slices ahead of the entry (Store.prepareRestoreFrom, into
// arenas, a piece at a time). The entry then names the file by its checksum and applying it swaps
// the loaded state in — on every server the state of the same bytes.
//
// A server without the file when its entry comes (down during the staging, or a new server that
// gets the entry by replication) fetches it from the others ('snapshot.fetch') and loads it before
// applying the entry: the state machine answers Raft NotReady meanwhile (agent/store-fsm.ts), so it
// only falls behind for that time, as a slow server does. A file is kept while its entry may still
// be replayed here (a restart) or sent from here to a follower: until the log no longer holds it,
// and at least APPLIED_KEEP_MS after it was applied. One never applied (a refused or abandoned
// restore) goes after UNAPPLIED_KEEP_MS.
import { createHash, type Hash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDir, type ServerInfo, type Transport } from '@registry/raft';
import type { RestoreSource, Store } from '@registry/store';
import { badRequest } from '../errors';
import { readFully, syncBulk, writeFully } from './file-io';
import { monotonicMs } from '../time';

/** Under the data dir: restores' staged state files. */
export const STAGED_DIR = 'snapshot-restores';
/**
 * A staging or fetch piece: a few ms of disk and network each. A piece arrives as one frame, joined
 * into memory of its own that the receiving event loop maps page by page: 4 MiB pieces cost it
 * ~26 ms of page faults each on a VM (a loop gap of 70 ms while three servers staged a restore).
 */
const PIECE_BYTES = 1 << 20;
/** The largest fetch piece served: what servers of an earlier release ask for (4 MiB pieces). */
const MAX_PIECE_BYTES = 4 << 20;
/** The pieces a restore decodes from: what Raft's own stored snapshots are read in. */
const READ_PIECE_BYTES = 1 << 20;
const STAGE = 'snapshot.stage';
const FETCH = 'snapshot.fetch';
/** A staged file kept at least this long after its entry was applied here. */
const APPLIED_KEEP_MS = 10 * 60_000;
/** A staged file no entry was applied from here is removed after this long (it is fetched again if one comes). */
const UNAPPLIED_KEEP_MS = 60 * 60_000;
/** How often files are looked at for removal. */
const SWEEP_MS = 60_000;
/** A loaded state no entry took is dropped after this long (it holds a whole second state). */
const PREPARED_TTL_MS = 10 * 60_000;
/** A server that cannot get or load a staged file yet tries again after this long. */
const RETRY_MS = 1_000;

/** One piece of a staged file, sent to a server ('snapshot.stage'). */
interface StagePiece {
  key: string;
  size: number;
  offset: number;
  data: Uint8Array;
}

/** A piece of a staged file asked of a server ('snapshot.fetch'). */
interface FetchRequest {
  key: string;
  offset: number;
  length: number;
}

export interface StagingDeps {
  dataDir: string;
  store: Store;
  /** The server port; without it (tests' single servers) only this server stages. */
  transport?: Transport;
  selfId: () => string;
  /** The servers of the Raft configuration: where a restore is staged and a file fetched from. */
  servers: () => ServerInfo[];
  /** The first index still in this server's Raft log (a staged file is kept while its entry is in it). */
  firstLogIndex: () => number;
  logger?: { info(o: object, msg: string): void; warn(o: object, msg: string): void };
  /**
   * Made for each load, run after each of its steps: the agent keeps V8's young generation small
   * there, as in a restart's restore (agent/young-generation.ts; left alone, the scavenges of what a
   * load allocates took 50–117 ms each at 192 MiB).
   */
  afterLoadStep?: () => () => void;
}

/** A file being received in pieces. */
interface Receiving {
  path: string;
  file: FileHandle;
  offset: number;
  hash: Hash;
}

export class RestoreStaging {
  private readonly dir: string;
  private readonly receiving = new Map<string, Receiving>();
  private readonly ensuring = new Map<string, Promise<void>>();
  private readonly expiry = new Map<string, NodeJS.Timeout>();
  private sweeper: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly d: StagingDeps) {
    this.dir = join(d.dataDir, STAGED_DIR);
    d.transport?.handle(STAGE, (body) => this.receivePiece(body as StagePiece));
    d.transport?.handle(FETCH, (body) => this.servePiece(body as FetchRequest));
  }

  /** Removes what an earlier run left half-received, and starts the sweep of old files. */
  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    for (const name of await readdir(this.dir)) if (name.endsWith('.partial')) await rm(join(this.dir, name), { force: true });
    this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), SWEEP_MS);
    this.sweeper.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.sweeper);
    for (const [key, timer] of this.expiry) {
      clearTimeout(timer);
      this.d.store.discardPrepared(key);
    }
    this.expiry.clear();
    for (const r of this.receiving.values()) void r.file.close().catch(() => undefined);
    this.receiving.clear();
  }

  /** The checked state file of a restore taken here (archive.ts extractArchive) becomes its staged file. */
  async adopt(path: string, key: string): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await rename(path, this.pathOf(key));
    await syncDir(this.dir);
  }

  /**
   * Sends the staged file to every server of the configuration and has each load it (this one
   * included). Waits until all have answered, but once this server is done, only twice as long
   * again for the others (at least 2 s): a server that is down or cut off must not hold the restore;
   * it fetches the file when the entry reaches it. Returns why this server could not load it (the
   * bytes are not a state: every server would refuse the entry), or null.
   */
  async stageEverywhere(key: string, size: number, timeoutMs: number): Promise<Error | null> {
    const started = monotonicMs();
    const servers = this.d.servers();
    const self = this.prepare(key, size);
    let selfError: Error | null = null;
    self.catch((err: unknown) => void (selfError = err instanceof Error ? err : new Error(String(err))));
    const ready = servers.map(() => false);
    const settled = servers.map((s, i) =>
      (s.id === this.d.selfId() || !this.d.transport ? self : this.sendTo(s.address, key, size, timeoutMs)).then(
        () => void (ready[i] = true),
        (err: unknown) => void this.d.logger?.warn({ server: s.address, err: err instanceof Error ? err.message : String(err) }, 'snapshot restore: staging on a server failed'),
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
    if (!ready.every(Boolean)) this.d.logger?.warn({ staged: count }, 'snapshot restore: not every server staged the state in time; the others fetch it when the entry reaches them');
    this.d.logger?.info({ staged: count, ms: monotonicMs() - started }, 'snapshot restore: state staged and loaded ahead of the entry');
    await self.catch(() => undefined);
    return selfError;
  }

  /**
   * Resolves once the state staged under `key` is loaded here, ready for its entry: from the file
   * here, or fetched first from another server. Never gives up while the server runs (an entry
   * applied without its state would part this server from the others): it logs and tries again.
   */
  ensure(key: string, size: number): Promise<void> {
    const running = this.ensuring.get(key);
    if (running) return running;
    const work = (async () => {
      for (let attempt = 1; !this.stopped; attempt++) {
        if (this.d.store.hasPrepared(key)) return;
        try {
          if (!(await this.has(key, size))) await this.fetch(key, size);
          await this.prepare(key, size);
          return;
        } catch (err) {
          this.d.logger?.warn({ key, attempt, err: err instanceof Error ? err.message : String(err) }, 'snapshot restore: the staged state is not here yet; trying again');
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        }
      }
      throw new Error('the server is stopping');
    })().finally(() => this.ensuring.delete(key));
    this.ensuring.set(key, work);
    return work;
  }

  /** The entry of `key` was applied here at `index`: its file is kept while the log holds that entry. */
  applied(key: string, index: number): void {
    void writeFile(this.indexPathOf(key), String(index)).catch(() => undefined);
  }

  /** Removes the files no entry here needs any more (the module comment says when). */
  async sweep(now = Date.now()): Promise<void> {
    const firstLogIndex = this.d.firstLogIndex();
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      if (!name.endsWith('.bin')) continue;
      const path = join(this.dir, name);
      const indexPath = path.replace(/\.bin$/, '.index');
      const age = now - (await stat(path).catch(() => ({ mtimeMs: now }))).mtimeMs;
      const appliedAt = Number(await readFile(indexPath, 'utf8').catch(() => 'NaN'));
      const gone = Number.isFinite(appliedAt) ? appliedAt < firstLogIndex && age >= APPLIED_KEEP_MS : age >= UNAPPLIED_KEEP_MS;
      if (!gone) continue;
      await rm(path, { force: true });
      await rm(indexPath, { force: true });
    }
  }

  // ---- here ----

  /** Loads the staged file into the store (once per key), dropped after PREPARED_TTL_MS if no entry takes it. */
  private async prepare(key: string, size: number): Promise<void> {
    if (this.d.store.hasPrepared(key)) return;
    const source = await fileSource(this.pathOf(key), size);
    try {
      await this.d.store.prepareRestoreFrom(key, source, { afterStep: this.d.afterLoadStep?.() });
    } finally {
      await source.close();
    }
    const old = this.expiry.get(key);
    if (old) clearTimeout(old);
    const timer = setTimeout(() => {
      this.expiry.delete(key);
      this.d.store.discardPrepared(key);
    }, PREPARED_TTL_MS);
    timer.unref();
    this.expiry.set(key, timer);
  }

  private async has(key: string, size: number): Promise<boolean> {
    const st = await stat(this.pathOf(key)).catch(() => null);
    return st !== null && st.size === size;
  }

  private pathOf(key: string): string {
    return join(this.dir, `${hexOf(key)}.bin`);
  }

  private indexPathOf(key: string): string {
    return join(this.dir, `${hexOf(key)}.index`);
  }

  // ---- between servers ----

  /** The staged file to one server, a piece at a time; its answer to the last comes once it loaded it. */
  private async sendTo(address: string, key: string, size: number, timeoutMs: number): Promise<void> {
    const transport = this.d.transport!;
    const file = await open(this.pathOf(key), 'r');
    // One buffer for every piece: a piece is written out before its answer comes. A new
    // buffer per piece, freed whenever V8 collected it, was heap glibc kept after the restore.
    const buffer = Buffer.allocUnsafe(Math.min(PIECE_BYTES, size));
    try {
      for (let offset = 0; offset < size; ) {
        const data = buffer.subarray(0, Math.min(PIECE_BYTES, size - offset));
        await readFully(file, data, offset);
        const answer = await transport.call(address, STAGE, { key, size, offset, data } satisfies StagePiece, timeoutMs);
        // The server holds the whole file already (a restore of the same archive again).
        if (answer === 'whole') return;
        offset += data.length;
      }
    } finally {
      await file.close();
    }
  }

  /** One piece of a file being staged here; the last is answered once the file is verified and loaded. */
  private async receivePiece(piece: StagePiece): Promise<string> {
    const { key, size, offset, data } = piece ?? ({} as StagePiece);
    if (typeof key !== 'string' || !Number.isSafeInteger(size) || !Number.isSafeInteger(offset) || !(data instanceof Uint8Array)) throw badRequest('snapshot.stage needs a key, a size, an offset and bytes');
    hexOf(key);
    if (offset === 0) {
      if (await this.has(key, size)) {
        await this.prepare(key, size);
        return 'whole';
      }
      await this.abandon(key);
      await mkdir(this.dir, { recursive: true });
      const path = join(this.dir, `${hexOf(key)}.partial`);
      this.receiving.set(key, { path, file: await open(path, 'w'), offset: 0, hash: createHash('sha256') });
    }
    const r = this.receiving.get(key);
    if (!r || r.offset !== offset) throw badRequest(`snapshot.stage: ${key} is not being received at offset ${offset}`);
    await writeFully(r.file, data);
    r.hash.update(data);
    r.offset += data.length;
    if (r.offset < size) return 'more';
    this.receiving.delete(key);
    await syncBulk(r.file);
    await r.file.close();
    if (r.offset !== size || `sha256:${r.hash.digest('hex')}` !== key) {
      await rm(r.path, { force: true });
      throw badRequest('snapshot.stage: the state does not match its checksum');
    }
    await rename(r.path, this.pathOf(key));
    await syncDir(this.dir);
    await this.prepare(key, size);
    return 'loaded';
  }

  private async abandon(key: string): Promise<void> {
    const r = this.receiving.get(key);
    if (!r) return;
    this.receiving.delete(key);
    await r.file.close().catch(() => undefined);
    await rm(r.path, { force: true });
  }

  /** A piece of a staged file, for a server fetching it. */
  private async servePiece(req: FetchRequest): Promise<Uint8Array> {
    const { key, offset, length } = req ?? ({} as FetchRequest);
    if (typeof key !== 'string' || !Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || length < 0 || length > MAX_PIECE_BYTES) throw badRequest('snapshot.fetch needs a key, an offset and a length');
    const file = await open(this.pathOf(key), 'r').catch(() => null);
    if (!file) throw badRequest(`snapshot.fetch: ${key} is not staged here`);
    try {
      const data = Buffer.allocUnsafe(length);
      await readFully(file, data, offset);
      return data;
    } finally {
      await file.close();
    }
  }

  /** The staged file from the first other server that has it whole, verified against its key. */
  private async fetch(key: string, size: number): Promise<void> {
    const transport = this.d.transport;
    if (!transport) throw new Error(`${key} is not staged here and there is no other server to fetch it from`);
    const others = this.d.servers().filter((s) => s.id !== this.d.selfId());
    await mkdir(this.dir, { recursive: true });
    const partial = join(this.dir, `${hexOf(key)}.fetching.partial`);
    for (const server of others) {
      const file = await open(partial, 'w');
      const hash = createHash('sha256');
      let whole = false;
      try {
        for (let offset = 0; offset < size; ) {
          const length = Math.min(PIECE_BYTES, size - offset);
          const data = (await transport.call(server.address, FETCH, { key, offset, length } satisfies FetchRequest, 60_000)) as Uint8Array;
          if (!(data instanceof Uint8Array) || data.length !== length) throw new Error(`a piece of ${data instanceof Uint8Array ? data.length : 'no'} bytes, not ${length}`);
          await writeFully(file, data);
          hash.update(data);
          offset += length;
        }
        await syncBulk(file);
        whole = `sha256:${hash.digest('hex')}` === key;
      } catch (err) {
        this.d.logger?.warn({ server: server.address, key, err: err instanceof Error ? err.message : String(err) }, 'snapshot restore: fetching the staged state from a server failed');
      } finally {
        await file.close();
      }
      if (whole) {
        await rename(partial, this.pathOf(key));
        await syncDir(this.dir);
        this.d.logger?.info({ server: server.address, key, bytes: size }, 'snapshot restore: staged state fetched');
        return;
      }
      await rm(partial, { force: true });
    }
    throw new Error(`no server has ${key} staged`);
  }
}

/** How a staged state is named: `sha256:<hex>` of its bytes (the hex names its file). */
export const STAGED_KEY = /^sha256:([0-9a-f]{64})$/;

/** The hex of a staged state's key: anything else is refused. */
function hexOf(key: string): string {
  const m = STAGED_KEY.exec(key);
  if (!m) throw badRequest(`a staged restore is named sha256:<64 hex digits>, not ${JSON.stringify(key).slice(0, 80)}`);
  return m[1];
}

/** A staged file as the store restores from it: in arenas through readRange, or 1 MiB pieces. */
async function fileSource(path: string, size: number): Promise<RestoreSource & { close(): Promise<void> }> {
  const file = await open(path, 'r');
  return {
    chunks: Math.max(1, Math.ceil(size / READ_PIECE_BYTES)),
    size,
    read: async (i) => {
      const data = Buffer.allocUnsafe(Math.max(0, Math.min(READ_PIECE_BYTES, size - i * READ_PIECE_BYTES)));
      await readFully(file, data, i * READ_PIECE_BYTES);
      return data;
    },
    readRange: (offset, into) => readFully(file, into, offset),
    close: () => file.close().catch(() => undefined),
  };
}
