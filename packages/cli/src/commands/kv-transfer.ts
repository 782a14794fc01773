// `registry kv export [prefix]` and `kv import [data]`: Consul's export format, a JSON array of
// {key, flags, value (base64)}, tab-indented.
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { clientOf, withServerFlags } from '../http-flags';
import { loadData, readStdin } from '../input-data';
import { out } from '../output';
import { parseKv, stringifyKv, type KvPair } from '../kv-json';
import { kvPath } from '../kv-path';

interface Exported {
  key: string;
  flags: number | bigint;
  value: string;
}

export function kvExportCommand(): Command {
  const c = withServerFlags(new Command('export').description('export a tree of the KV store as JSON')).argument('[prefix]', 'the prefix', '');
  return c.action((prefix: string) =>
    attempt('Error querying Registry agent', async () => {
      const reply = await clientOf(c.opts()).request('GET', kvPath(prefix), { query: { recurse: true }, accept: [404] });
      const pairs = reply.status === 404 ? [] : parseKv<KvPair[]>(reply.text());
      const exported: Exported[] = pairs.map((p) => ({ key: p.Key, flags: p.Flags, value: p.Value ?? '' }));
      out(stringifyKv(exported, '\t'));
    }),
  );
}

export function kvImportCommand(): Command {
  const c = withServerFlags(new Command('import').description('import a tree exported by `kv export`'))
    .argument('[data]', 'the JSON; @file reads a file, - or nothing reads stdin')
    .option('--prefix <prefix>', 'prepended to every imported key', '');
  return c.action((data: string | undefined) =>
    attempt('Error! Failed writing data', async () => {
      const o = c.opts();
      const raw = data === undefined ? await readStdin() : await loadData(data);
      let entries: Exported[];
      try {
        entries = parseKv<Exported[]>(raw.toString('utf8'));
        if (!Array.isArray(entries)) throw new Error('expected a JSON array');
      } catch (e) {
        throw usage(`Cannot unmarshal data: ${(e as Error).message}`);
      }
      const client = clientOf(o);
      for (const e of entries) {
        const key = o.prefix + e.key;
        const value = Buffer.from(e.value ?? '', 'base64');
        try {
          await client.request('PUT', kvPath(key), { query: { flags: e.flags ? String(e.flags) : undefined }, body: value });
        } catch (err) {
          throw usage(`Error! Failed writing data for key ${key}: ${(err as Error).message}`);
        }
        out(`Imported: ${key}`);
      }
    }),
  );
}
