// The `registry` program for the client commands (every command but `agent`): commander's root with
// the commands it is given, Go-style flags rewritten, and what a command throws turned into Consul's
// one-line error and exit code. main.ts hands it the one command asked for — from that command's
// bundle when there is a fresh one (client-bundle.ts), else from the compiled modules.
import { Command } from 'commander';
import { CliError, ExitCode } from './cli-error';
import { cliVersion } from './cli-version';
import { goFlagsToLong, splitChildWords } from './go-flags';
import { ApiError } from './http-client';
import { LOCK_VALUE_FLAGS } from './lock/lock-flags';

export async function runClient(argv: string[], commands: Command[]): Promise<void> {
  const program = new Command('registry')
    .description('registry: a clustered service registry')
    .version(cliVersion(), '--version')
    .enablePositionalOptions()
    .showHelpAfterError();
  // Listed for --help only; `registry agent …` is dispatched by main.ts, before commander sees it.
  program.command('agent').description('run a registry agent (a server with -server, else a client agent)').allowUnknownOption().helpOption(false);
  for (const c of commands) program.addCommand(c);
  try {
    const words = argv[0] === 'lock' ? ['lock', ...splitChildWords(argv.slice(1), LOCK_VALUE_FLAGS, 1)] : goFlagsToLong(argv);
    await program.parseAsync(words, { from: 'user' });
  } catch (e) {
    if (e instanceof ExitCode) {
      process.exitCode = e.exitCode;
      return;
    }
    const exitCode = e instanceof CliError ? e.exitCode : 1;
    const message = e instanceof CliError || e instanceof ApiError ? e.message : `Error: ${(e as Error)?.message ?? e}`;
    process.stderr.write(message + '\n');
    process.exitCode = exitCode;
  }
}
