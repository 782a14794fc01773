// Which format a data dir holds (issue #34): `<data-dir>/data-format`, one JSON line
// `{"format": N, "written_by": "<release>"}`, written durably on the first start and checked on every
// start before anything else in the data dir is opened. A binary refuses a data dir of a newer format
// than it reads — naming both formats and the release that wrote it — instead of reading (or, worse,
// converting: the LevelDB → WAL move of agent/raft-storage.ts) state laid out in a way it does not
// know. A data dir without the file is either new (empty: it gets the current format) or from
// before this file existed, which is format 1. An older format is migrated once, by the steps in
// MIGRATIONS, and then marked as the current one.
//
// Formats: 1 — Raft snapshots inside LevelDB (pieces under a head); 2 — Raft snapshots as files in
// `<data-dir>/raft/snapshots` (issue #34), LevelDB holding none.
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Level } from 'level';
import { LevelStorage } from '@registry/raft';
import { writeFileDurably } from '../runtime/durable-file';
import { raftSnapshotDir } from './raft-storage';

/** The format this binary writes and reads. Bump it, with a step in MIGRATIONS, when the layout changes. */
export const DATA_FORMAT = 2;
export const DATA_FORMAT_FILE = 'data-format';

/**
 * 1 → 2: the Raft snapshot still in LevelDB is written into a snapshot file, then deleted from
 * LevelDB (LevelStorage does it when it opens; crash-safe and idempotent: a file already
 * installed is not written twice). A data dir without a LevelDB (a client agent's) has nothing to move.
 */
async function snapshotsOutOfLevelDb(dataDir: string): Promise<void> {
  if (!existsSync(join(dataDir, 'db'))) return;
  const db = new Level<string, unknown>(join(dataDir, 'db'), { valueEncoding: 'view' });
  await db.open();
  try {
    const storage = new LevelStorage({ db, prefix: 'raft', snapshotDir: raftSnapshotDir(dataDir) });
    await storage.moveSnapshotsOut();
    await storage.close();
  } finally {
    await db.close();
  }
}

/** format N → N + 1, run in order on a data dir of an older format. */
const MIGRATIONS: ReadonlyMap<number, (dataDir: string) => Promise<void>> = new Map([[1, snapshotsOutOfLevelDb]]);

export class DataFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataFormatError';
  }
}

interface Marker {
  format: number;
  written_by?: string;
}

async function readMarker(file: string): Promise<Marker | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const format = (parsed as Partial<Marker> | undefined)?.format;
  if (typeof format !== 'number' || !Number.isSafeInteger(format) || format < 1) {
    throw new DataFormatError(`${file} is not a data format marker (expected {"format": <integer ≥ 1>}): repair or remove it (without it the data dir is taken as format ${DATA_FORMAT})`);
  }
  const by = (parsed as Partial<Marker>).written_by;
  return { format, ...(typeof by === 'string' ? { written_by: by } : {}) };
}

const markerText = (release: string) => JSON.stringify({ format: DATA_FORMAT, written_by: release }) + '\n';

/**
 * Checks (and on a first start writes) the data dir's format marker. Throws a DataFormatError naming
 * both formats when the data dir is newer than this binary reads. `release` is this binary's version.
 * Returns what it found: 'new' (no marker: written now), 'current', or the format migrated from.
 */
export async function checkDataFormat(dataDir: string, release: string): Promise<'new' | 'current' | number> {
  const file = join(dataDir, DATA_FORMAT_FILE);
  let found = await readMarker(file);
  if (!found) {
    // Anything in it (a LevelDB, a Raft folder, a node id) was written before the marker existed: format 1.
    if (readdirSync(dataDir).length === 0) {
      await writeFileDurably(file, markerText(release), 0o644);
      return 'new';
    }
    found = { format: 1 };
  }
  if (found.format === DATA_FORMAT) return 'current';
  if (found.format > DATA_FORMAT) {
    const by = found.written_by ? ` (written by registry ${found.written_by})` : '';
    throw new DataFormatError(
      `data dir ${dataDir} is in data format ${found.format}${by}, newer than this registry ${release} reads (data format ${DATA_FORMAT}): ` +
        `start it with a registry release that reads data format ${found.format}, or start this one on an empty data dir (it then catches up from the cluster)`,
    );
  }
  for (let from = found.format; from < DATA_FORMAT; from++) {
    const step = MIGRATIONS.get(from);
    if (!step) throw new DataFormatError(`data dir ${dataDir} is in data format ${from}, which this registry ${release} cannot migrate to ${DATA_FORMAT}`);
    await step(dataDir);
  }
  await writeFileDurably(file, markerText(release), 0o644);
  return found.format;
}
