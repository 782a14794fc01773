// `registry snapshot save|restore|inspect FILE` (Consul's command/snapshot). The archive reader is
// the server package's snapshot/archive.ts (it imports only zlib, crypto and tar-stream), loaded
// only by `save` (to verify) and `inspect`, so the other commands stay small.
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { clientOf, withServerFlags, withClientFlags } from '../http-flags';
import { out } from '../output';

interface ArchiveMeta {
  ID: string;
  Size: number;
  Index: number;
  Term: number;
  Version: number;
  Datacenter?: string;
  Created?: string;
}

interface ArchiveReader {
  inspectArchive(archive: Uint8Array): Promise<ArchiveMeta>;
}

/** A variable specifier: resolved at run time, so the server package is not part of the CLI's build graph here. */
const ARCHIVE_MODULE = '@registry/server/dist/snapshot/archive.js';

async function archiveReader(): Promise<ArchiveReader> {
  return (await import(ARCHIVE_MODULE)) as ArchiveReader;
}

function readFile(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw usage(`Error opening snapshot file: ${(e as Error).message}`);
  }
}

export function snapshotCommand(): Command {
  const snapshot = new Command('snapshot').description('save, restore and inspect snapshots of the cluster\'s state');

  const save = withServerFlags(new Command('save').description('save a snapshot to FILE')).argument('<file>');
  snapshot.addCommand(
    save.action((file: string) =>
      attempt('Error saving snapshot', async () => {
        const reply = await clientOf(save.opts()).request('GET', '/v1/snapshot', { timeoutMs: 10 * 60_000 });
        const tmp = `${file}.tmp`;
        writeFileSync(tmp, reply.body);
        try {
          await (await archiveReader()).inspectArchive(reply.body);
        } catch (e) {
          unlinkSync(tmp);
          throw usage(`Error verifying snapshot file: ${(e as Error).message}`);
        }
        renameSync(tmp, file);
        out(`Saved and verified snapshot to index ${reply.index}`);
      }),
    ),
  );

  const restore = withClientFlags(new Command('restore').description('replace the cluster\'s state with the snapshot in FILE'))
    .argument('<file>')
    .option('--datacenter <dc>', 'datacenter to restore into');
  snapshot.addCommand(
    restore.action((file: string) =>
      attempt('Error restoring snapshot', async () => {
        const body = readFile(file);
        await clientOf(restore.opts()).request('PUT', '/v1/snapshot', { body, timeoutMs: 10 * 60_000 });
        out('Restored snapshot');
      }),
    ),
  );

  const inspect = new Command('inspect').description('show the metadata of the snapshot in FILE').argument('<file>');
  snapshot.addCommand(
    inspect.action((file: string) =>
      attempt('Error inspecting snapshot', async () => {
        const meta = await (await archiveReader()).inspectArchive(readFile(file));
        const rows: [string, string][] = [
          ['ID', meta.ID],
          ['Size', String(meta.Size)],
          ['Index', String(meta.Index)],
          ['Term', String(meta.Term)],
          ['Version', String(meta.Version)],
        ];
        if (meta.Datacenter) rows.push(['Datacenter', meta.Datacenter]);
        if (meta.Created) rows.push(['Created', meta.Created]);
        for (const [k, v] of rows) out(k.padEnd(13) + v);
      }),
    ),
  );
  return snapshot;
}
