// The version `registry version` prints: the cli package's own (every workspace shares it), read
// without loading the server package.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export function cliVersion(): string {
  return (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
}
