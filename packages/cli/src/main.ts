// The `registry` command. `agent` runs a server; the other commands talk HTTP to an agent.
import { Command } from 'commander';
import { VERSION } from '@registry/server';
import { agentCommand } from './agent-command';
import { goFlagsToLong } from './go-flags';
import { httpCommands } from './http-commands';

export async function main(argv: string[]): Promise<void> {
  const program = new Command('registry')
    .description('registry: a clustered service registry')
    .version(VERSION, '--version')
    .showHelpAfterError();
  program.addCommand(agentCommand());
  for (const c of httpCommands()) program.addCommand(c);
  await program.parseAsync(goFlagsToLong(argv), { from: 'user' });
}
