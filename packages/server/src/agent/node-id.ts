// A server's identity survives restarts: a UUID kept in the data dir (Consul's node-id file), or
// the configured `node_id`, which wins (and, as in Consul, is not written to the file).
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function loadOrCreateNodeId(dataDir: string, configured?: string): Promise<string> {
  if (configured) return configured;
  const file = join(dataDir, 'node-id');
  try {
    const id = (await readFile(file, 'utf8')).trim();
    if (/^[0-9a-f-]{36}$/i.test(id)) return id;
  } catch {
    // first start
  }
  const id = randomUUID();
  await writeFile(file, id + '\n', { mode: 0o600 });
  return id;
}
