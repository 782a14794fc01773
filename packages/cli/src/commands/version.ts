// `registry version`: no agent needed; the version is the cli package's own (all workspaces share it).
import { Command } from 'commander';
import { cliVersion } from '../cli-version';
import { out } from '../output';

export function versionCommand(): Command {
  return new Command('version').description('print the registry version').action(() => {
    out(`Registry v${cliVersion()}`);
    out('Protocol 2 spoken by default, understands 2 to 3 (agent will automatically use protocol >2 when speaking to compatible agents)');
  });
}
