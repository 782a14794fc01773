// A server's identity survives restarts: a UUID kept in the data dir (Consul's node-id file), or
// the configured `node_id`, which wins (and, as in Consul, is not written to the file). The file is
// written durably (runtime/durable-file.ts); a server also records its id beside its Raft state (in
// the data dir's LevelDB, synced), so that a node-id file lost to a power cut right after the first
// start is recovered from there instead of a new id being minted over existing Raft state — which
// made the server a new, unknown member of its own cluster (issue 35). Raft state without a
// readable id anywhere is a refused start that names the file and the fix.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Level } from 'level';
import { writeFileDurably } from '../runtime/durable-file';
import type { Logger } from '../runtime/logger';

export const NODE_ID_FILE = 'node-id';
/** The key in the data dir's LevelDB that holds the id beside the Raft state (outside Raft's sublevel). */
export const NODE_ID_KEY = 'agent-node-id';

const isNodeId = (s: string) => /^[0-9a-f-]{36}$/i.test(s);

async function readIdFile(file: string): Promise<string | undefined> {
  try {
    const id = (await readFile(file, 'utf8')).trim();
    return isNodeId(id) ? id : undefined;
  } catch {
    return undefined; // missing (first start) or unreadable
  }
}

/** A client agent's id (no Raft state to recover it from): the file, else a new one written durably. */
export async function loadOrCreateNodeId(dataDir: string, configured?: string): Promise<string> {
  if (configured) return configured;
  const file = join(dataDir, NODE_ID_FILE);
  const found = await readIdFile(file);
  if (found) return found;
  const id = randomUUID();
  await writeFileDurably(file, id + '\n');
  return id;
}

export interface ServerIdentity {
  db: Level<string, unknown>;
  /** Whether the data dir holds Raft state (a log, hard state or snapshot) besides the recorded id. */
  hasRaftState(): Promise<boolean>;
  logger: Logger;
}

async function recordedId(db: Level<string, unknown>): Promise<string | undefined> {
  const v = await db.get(NODE_ID_KEY).catch(() => undefined);
  if (v === undefined || v === null) return undefined;
  const text = Buffer.from(v as Uint8Array).toString('utf8');
  return isNodeId(text) ? text : undefined;
}

const record = (db: Level<string, unknown>, id: string) => db.put(NODE_ID_KEY, Buffer.from(id), { sync: true });

/** A server's id: configured, else the node-id file, else the id recorded beside its Raft state, else new (no Raft state). */
export async function loadOrCreateServerNodeId(dataDir: string, configured: string | undefined, s: ServerIdentity): Promise<string> {
  if (configured) return configured;
  const file = join(dataDir, NODE_ID_FILE);
  const [fromFile, fromDb] = await Promise.all([readIdFile(file), recordedId(s.db)]);
  if (fromFile) {
    if (fromDb !== fromFile) {
      // An older data dir (recorded nothing yet), or an operator who wrote the file on purpose: the file wins.
      if (fromDb) s.logger.warn({ file, id: fromFile, recorded: fromDb }, 'node-id file differs from the id recorded beside the Raft state; using the file');
      await record(s.db, fromFile);
    }
    return fromFile;
  }
  if (fromDb) {
    s.logger.warn({ file, id: fromDb }, 'node-id file missing or unreadable; recovered this server\'s id from its Raft state and wrote the file again');
    await writeFileDurably(file, fromDb + '\n');
    return fromDb;
  }
  if (await s.hasRaftState()) {
    throw new Error(
      `${file} is missing or unreadable, but ${dataDir} holds Raft state, and this server's id cannot be recovered from it: ` +
        `write the server's id (the ID that \`registry operator raft list-peers\` shows for it) into ${file}, or set node_id in the configuration; ` +
        `to join as a new server instead, empty ${dataDir} (and remove the old id with \`registry operator raft remove-peer\`)`,
    );
  }
  const id = randomUUID();
  // Recorded beside the Raft state first: a cut between the two writes leaves an id to recover.
  await record(s.db, id);
  await writeFileDurably(file, id + '\n');
  return id;
}
