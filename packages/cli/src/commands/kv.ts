// `registry kv get|put|delete` (Consul's command/kv/*): messages, flags and exit codes as Consul's.
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { CliError } from '../cli-error';
import { clientOf, withServerFlags } from '../http-flags';
import { loadData } from '../input-data';
import { out } from '../output';
import { parseKv, type KvPair } from '../kv-json';
import { kvPath } from '../kv-path';
import { kvExportCommand, kvImportCommand } from './kv-transfer';


const uint = (name: string) => (v: string) => {
  if (!/^\d+$/.test(v)) throw new CliError(`invalid value "${v}" for flag -${name}: parse error`);
  return v;
};

/** Consul's -detailed block: tabwriter with padding 6 after the longest field name. */
function printDetailed(p: KvPair, base64: boolean): void {
  const value = p.Value === null ? '' : base64 ? p.Value : Buffer.from(p.Value, 'base64').toString('utf8');
  const rows: [string, string][] = [
    ['CreateIndex', String(p.CreateIndex)],
    ['Flags', String(p.Flags)],
    ['Key', p.Key],
    ['LockIndex', String(p.LockIndex)],
    ['ModifyIndex', String(p.ModifyIndex)],
    ['Session', p.Session || '-'],
    ['Value', value],
  ];
  for (const [k, v] of rows) out(k.padEnd(11 + 6) + v);
}

function valueBytes(p: KvPair, base64: boolean): Buffer {
  if (p.Value === null) return Buffer.alloc(0);
  return base64 ? Buffer.from(p.Value) : Buffer.from(p.Value, 'base64');
}

function kvGet(): Command {
  const c = withServerFlags(new Command('get').description('read a value (or, with -recurse or -keys, a tree)'))
    .argument('[key]', 'the key')
    .option('--base64', 'print values base64-encoded')
    .option('--detailed', 'print every field of the entry')
    .option('--keys', 'list the keys under the prefix (up to -separator)')
    .option('--recurse', 'read every key under the prefix')
    .option('--separator <sep>', 'with -keys, list keys only up to this separator', '/');
  return c.action((key: string | undefined) =>
    attempt('Error querying Registry agent', async () => {
      const o = c.opts();
      if (key === undefined && !o.keys && !o.recurse) throw usage('Error! Missing KEY argument');
      key = key ?? '';
      if (o.keys && o.recurse) throw usage('Cannot specify both -keys and -recurse!');
      const client = clientOf(o);
      if (o.keys) {
        const reply = await client.request('GET', kvPath(key), { query: { keys: true, separator: o.separator }, accept: [404] });
        const keys = reply.status === 404 ? [] : reply.json<string[]>();
        for (const k of keys) out(k);
        return;
      }
      const reply = await client.request('GET', kvPath(key), { query: { recurse: !!o.recurse }, accept: [404] });
      const pairs = reply.status === 404 ? [] : parseKv<KvPair[]>(reply.text());
      if (o.recurse) {
        pairs.forEach((p, i) => {
          if (o.detailed) {
            printDetailed(p, !!o.base64);
            if (i < pairs.length - 1) out('');
          } else {
            process.stdout.write(Buffer.concat([Buffer.from(`${p.Key}:`), valueBytes(p, !!o.base64), Buffer.from('\n')]));
          }
        });
        return;
      }
      if (pairs.length === 0) throw usage(`Error! No key exists at: ${key}`);
      if (o.detailed) printDetailed(pairs[0], !!o.base64);
      else process.stdout.write(Buffer.concat([valueBytes(pairs[0], !!o.base64), Buffer.from('\n')]));
    }),
  );
}

function kvPut(): Command {
  const c = withServerFlags(new Command('put').description('write a value'))
    .argument('[key]', 'the key')
    .argument('[data]', 'the value; @file reads a file, - reads stdin')
    .option('--acquire', 'take the lock on the key with -session')
    .option('--base64', 'the data is base64-encoded')
    .option('--cas', 'check-and-set: write only if the key\'s modify index is -modify-index')
    .option('--flags <uint>', 'the flags stored with the value', uint('flags'), '0')
    .option('--modify-index <uint>', 'with -cas, the index the key must have (0: must not exist)', uint('modify-index'), '0')
    .option('--release', 'release the lock on the key held by -session')
    .option('--session <id>', 'the session for -acquire and -release');
  return c.action((key: string | undefined, data: string | undefined, _o: unknown, cmd: Command) =>
    attempt('Error! Failed writing data', async () => {
      const o = c.opts();
      if (cmd.args.length > 2) throw usage(`Too many arguments (expected 1 or 2, got ${cmd.args.length})`);
      if (!key) throw usage('Error! Missing KEY argument');
      if ((o.acquire || o.release) && !o.session) throw usage('Error! Missing -session (required with -acquire and -release)');
      let value = data === undefined ? Buffer.alloc(0) : await loadData(data);
      if (o.base64) {
        const text = value.toString('utf8').trim();
        if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw usage('Error! Cannot base 64 decode data: illegal base64 data');
        value = Buffer.from(text, 'base64');
      }
      const query: Record<string, string | undefined> = { flags: o.flags !== '0' ? o.flags : undefined };
      if (o.cas) query.cas = o.modifyIndex;
      if (o.acquire) query.acquire = o.session;
      if (o.release) query.release = o.session;
      const ok = (await clientOf(o).request('PUT', kvPath(key), { query, body: value })).json<boolean>();
      if (o.acquire) {
        if (!ok) throw usage('Error! Did not acquire lock');
        out(`Success! Lock acquired on: ${key}`);
      } else if (o.release) {
        if (!ok) throw usage('Error! Did not release lock');
        out(`Success! Lock released on: ${key}`);
      } else if (o.cas && !ok) {
        throw usage(`Error! Did not write to ${key}: CAS failed`);
      } else {
        out(`Success! Data written to: ${key}`);
      }
    }),
  );
}

function kvDelete(): Command {
  const c = withServerFlags(new Command('delete').description('remove a key (or, with -recurse, every key under a prefix)'))
    .argument('[key]', 'the key or prefix')
    .option('--cas', 'delete only if the key\'s modify index is -modify-index')
    .option('--modify-index <uint>', 'with -cas, the index the key must have', uint('modify-index'), '0')
    .option('--recurse', 'delete every key under the prefix');
  return c.action((key: string | undefined) =>
    attempt('Error! Did not delete key', async () => {
      const o = c.opts();
      if (!key && !o.recurse) throw usage('Error! Missing KEY argument');
      key = key ?? '';
      if (o.cas && o.recurse) throw usage('Cannot specify both -cas and -recurse!');
      if (o.modifyIndex !== '0' && !o.cas) throw usage('Cannot specify -modify-index without -cas!');
      const query = { recurse: !!o.recurse, cas: o.cas ? o.modifyIndex : undefined };
      const ok = (await clientOf(o).request('DELETE', kvPath(key), { query })).json<boolean>();
      if (o.cas && !ok) throw usage(`Error! Did not delete key ${key}: CAS failed`);
      out(o.recurse ? `Success! Deleted keys with prefix: ${key}` : `Success! Deleted key: ${key}`);
    }),
  );
}

const SUBCOMMANDS: Record<string, () => Command> = { get: kvGet, put: kvPut, delete: kvDelete, export: kvExportCommand, import: kvImportCommand };

/**
 * `words` are the command line's words after `kv`. When the first names a subcommand only that one
 * is built — each tree of options costs start-up CPU — else all of them (`kv -h`, a typo's hint).
 */
export function kvCommand(words: readonly string[] = []): Command {
  const kv = new Command('kv').description('interact with the key/value store');
  const asked = words[0] !== undefined && Object.hasOwn(SUBCOMMANDS, words[0]) ? [SUBCOMMANDS[words[0]]] : Object.values(SUBCOMMANDS);
  for (const make of asked) kv.addCommand(make());
  return kv;
}
