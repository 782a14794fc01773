// The `registry` command. `agent` runs a server and is loaded only when asked for (it pulls in the
// whole server package); every other command is a small HTTP client, loaded alone — from its bundle
// when a fresh one was built (client-bundle.ts), else from its compiled modules — so that
// `registry version` and `registry kv get` start in a few milliseconds over Node's own start
// (bench/cli/, docs/benchmarks.md).
// Each path requires what it uses where it uses it: a command from its bundle loads three files in
// all (this one, client-bundle.js and the bundle), plain `version` three (this one, version-text.js,
// cli-version.js); every file loaded costs start-up CPU.
/* eslint-disable @typescript-eslint/no-require-imports */

export async function main(argv: string[]): Promise<void> {
  // `registry kv get -recurse | head`: a closed pipe ends the command quietly, as it does in Go.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
  // Plain `registry version` is answered without commander, whose loading (and node:child_process,
  // which it requires) is a third of this command's own CPU; any flag goes the usual way.
  if (argv.length === 1 && argv[0] === 'version') {
    const { versionLines } = require('./version-text') as typeof import('./version-text');
    process.stdout.write(versionLines().join('\n') + '\n');
    return;
  }
  if (argv[0] === 'agent') {
    // The server's ~1,060 modules compiled from V8's code cache where it is fresh (compile-cache.ts).
    (require('./compile-cache') as typeof import('./compile-cache')).enableCompileCache(__dirname);
    const { agentCommand } = await import('./agent-command.js');
    const { goFlagsToLong } = require('./go-flags') as typeof import('./go-flags');
    await agentCommand().name('registry agent').parseAsync(goFlagsToLong(argv.slice(1)), { from: 'user' });
    return;
  }
  // Bundles exist only for the client commands (client-commands.ts), so a command name with a fresh
  // bundle is one of them; the pattern keeps any other word from naming a path.
  const bundle = /^[a-z][a-z-]*$/.test(argv[0] ?? '') ? (require('./client-bundle') as typeof import('./client-bundle')).loadBundle(__dirname, argv[0]) : undefined;
  if (bundle) return bundle.run(argv);
  const { clientCommands } = require('./client-commands') as typeof import('./client-commands');
  const { runClient } = require('./client-program') as typeof import('./client-program');
  await runClient(argv, clientCommands(argv));
}
