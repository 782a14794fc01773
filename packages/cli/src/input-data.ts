// Consul's way of taking data from an argument: `@file` reads the file, `-` reads stdin, anything
// else is the data itself (command/helpers.LoadDataSource).
import { readFileSync } from 'node:fs';
import { CliError } from './cli-error';

export async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function loadData(arg: string): Promise<Buffer> {
  if (arg.startsWith('@')) {
    try {
      return readFileSync(arg.slice(1));
    } catch (e) {
      throw new CliError(`Failed to read file: ${(e as Error).message}`);
    }
  }
  if (arg === '-') return readStdin();
  return Buffer.from(arg);
}
