// `registry version`: no agent needed; the version is the cli package's own (all workspaces share it).
import { Command } from 'commander';
import { out } from '../output';
import { versionLines } from '../version-text';

export function versionCommand(): Command {
  return new Command('version').description('print the registry version').action(() => {
    for (const line of versionLines()) out(line);
  });
}
