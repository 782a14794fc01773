// `registry validate FILE|DIR…`: read the files as `registry agent -config-file/-config-dir` would
// (schema, HCL, merge, the agent's own checks) without starting anything. Exit 0 with
// "Configuration is valid!", or print every problem found and exit 1 (Consul's `consul validate`).
// The server package is loaded only when the command runs, so other commands stay quick to start.
import { Command } from 'commander';
import { ExitCode } from './cli-error';

export function validateCommand(): Command {
  return new Command('validate')
    .description('check configuration files or directories without starting an agent')
    .argument('<paths...>', 'config files (.json, .hcl) or directories of them')
    .option('--quiet', 'print nothing when the configuration is valid')
    .action(async (paths: string[], opts: { quiet?: boolean }) => {
      const { buildConfig, ConfigError, sourceOf } = await import('@registry/server');
      try {
        buildConfig({ configSources: paths.map(sourceOf) });
      } catch (err) {
        const errors = err instanceof ConfigError ? err.errors : [(err as Error).message];
        process.stderr.write(`Config validation failed:\n${errors.map((e) => `  * ${e}`).join('\n')}\n`);
        throw new ExitCode(1);
      }
      if (!opts.quiet) console.log('Configuration is valid!');
    });
}
