// The `registry` command. `agent` runs a server and is loaded only when asked for (it pulls in the
// whole server package); every other command is a small HTTP client, so `registry version` and
// `registry kv get` start in a few tens of milliseconds (bench/cli/).
import type { Command } from 'commander';
import { CliError, ExitCode } from './cli-error';
import { goFlagsToLong, splitChildWords } from './go-flags';
import { cliVersion } from './cli-version';
import { versionLines } from './version-text';

/** Every client command by name; only the one asked for is built (commander trees cost start-up CPU). */
// Modules are required only for the command asked for: loading all of them cost start-up CPU.
/* eslint-disable @typescript-eslint/no-require-imports */
const COMMANDS: Record<string, () => Command> = {
  version: () => (require('./commands/version') as typeof import('./commands/version')).versionCommand(),
  info: () => (require('./commands/info') as typeof import('./commands/info')).infoCommand(),
  members: () => (require('./commands/members') as typeof import('./commands/members')).membersCommand(),
  catalog: () => (require('./commands/catalog') as typeof import('./commands/catalog')).catalogCommand(),
  kv: () => (require('./commands/kv') as typeof import('./commands/kv')).kvCommand(),
  lock: () => (require('./commands/lock') as typeof import('./commands/lock')).lockCommand(),
  watch: () => (require('./commands/watch') as typeof import('./commands/watch')).watchCommand(),
  acl: () => (require('./commands/acl') as typeof import('./commands/acl')).aclCommand(),
  intention: () => (require('./commands/intention') as typeof import('./commands/intention')).intentionCommand(),
  event: () => (require('./commands/event') as typeof import('./commands/event')).eventCommand(),
  services: () => (require('./commands/services') as typeof import('./commands/services')).servicesCommand(),
  snapshot: () => (require('./commands/snapshot') as typeof import('./commands/snapshot')).snapshotCommand(),
  maint: () => (require('./commands/maint') as typeof import('./commands/maint')).maintCommand(),
  operator: () => (require('./commands/operator') as typeof import('./commands/operator')).operatorCommand(),
  join: () => (require('./commands/membership') as typeof import('./commands/membership')).joinCommand(),
  leave: () => (require('./commands/membership') as typeof import('./commands/membership')).leaveCommand(),
  'force-leave': () => (require('./commands/membership') as typeof import('./commands/membership')).forceLeaveCommand(),
  reload: () => (require('./commands/membership') as typeof import('./commands/membership')).reloadCommand(),
  validate: () => (require('./validate-command') as typeof import('./validate-command')).validateCommand(),
};

export function clientCommands(only?: string): Command[] {
  if (only && COMMANDS[only]) return [COMMANDS[only]()];
  return Object.values(COMMANDS).map((make) => make());
}

export async function main(argv: string[]): Promise<void> {
  // `registry kv get -recurse | head`: a closed pipe ends the command quietly, as it does in Go.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
  // Plain `registry version` is answered without commander, whose loading (and node:child_process,
  // which it requires) is a third of this command's own CPU; any flag goes the usual way.
  if (argv.length === 1 && argv[0] === 'version') {
    process.stdout.write(versionLines().join('\n') + '\n');
    return;
  }
  if (argv[0] === 'agent') {
    const { agentCommand } = await import('./agent-command.js');
    await agentCommand().name('registry agent').parseAsync(goFlagsToLong(argv.slice(1)), { from: 'user' });
    return;
  }
  const { Command: CommandClass } = require('commander') as typeof import('commander');
  const program = new CommandClass('registry')
    .description('registry: a clustered service registry')
    .version(cliVersion(), '--version')
    .enablePositionalOptions()
    .showHelpAfterError();
  // Listed for --help only; `registry agent …` is dispatched above, before commander sees it.
  program.command('agent').description('run a registry agent (server)').allowUnknownOption().helpOption(false);
  for (const c of clientCommands(argv[0])) program.addCommand(c);
  try {
    const words = argv[0] === 'lock' ? ['lock', ...splitChildWords(argv.slice(1), (require('./commands/lock') as typeof import('./commands/lock')).LOCK_VALUE_FLAGS, 1)] : goFlagsToLong(argv);
    await program.parseAsync(words, { from: 'user' });
  } catch (e) {
    if (e instanceof ExitCode) {
      process.exitCode = e.exitCode;
      return;
    }
    const exitCode = e instanceof CliError ? e.exitCode : 1;
    const { ApiError } = require('./http-client') as typeof import('./http-client');
    const message = e instanceof CliError || e instanceof ApiError ? e.message : `Error: ${(e as Error)?.message ?? e}`;
    process.stderr.write(message + '\n');
    process.exitCode = exitCode;
  }
}
