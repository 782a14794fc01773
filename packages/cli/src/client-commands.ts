// Every client command (all but `agent`): the module that defines it and the function that builds
// its commander tree. Plain data, so that main.ts loads only the one asked for (each module and its
// commander tree cost start-up CPU) and scripts/build-bundles.js makes one bundle per command.
import type { Command } from 'commander';

/**
 * Builds a command's tree, given the words after the command's name: one with subcommands may build
 * only the one asked for (kv does).
 */
export type CommandFactory = (words: readonly string[]) => Command;

/** Command name → [module, relative to this file; the CommandFactory it exports]. */
export const COMMAND_MODULES: Readonly<Record<string, readonly [module: string, factory: string]>> = {
  version: ['./commands/version', 'versionCommand'],
  info: ['./commands/info', 'infoCommand'],
  members: ['./commands/members', 'membersCommand'],
  catalog: ['./commands/catalog', 'catalogCommand'],
  kv: ['./commands/kv', 'kvCommand'],
  lock: ['./commands/lock', 'lockCommand'],
  watch: ['./commands/watch', 'watchCommand'],
  acl: ['./commands/acl', 'aclCommand'],
  intention: ['./commands/intention', 'intentionCommand'],
  event: ['./commands/event', 'eventCommand'],
  services: ['./commands/services', 'servicesCommand'],
  snapshot: ['./commands/snapshot', 'snapshotCommand'],
  maint: ['./commands/maint', 'maintCommand'],
  operator: ['./commands/operator', 'operatorCommand'],
  join: ['./commands/membership', 'joinCommand'],
  leave: ['./commands/membership', 'leaveCommand'],
  'force-leave': ['./commands/membership', 'forceLeaveCommand'],
  reload: ['./commands/membership', 'reloadCommand'],
  validate: ['./validate-command', 'validateCommand'],
  healthcheck: ['./commands/healthcheck', 'healthcheckCommand'],
  monitor: ['./commands/monitor', 'monitorCommand'],
  rtt: ['./commands/rtt', 'rttCommand'],
  tls: ['./commands/tls', 'tlsCommand'],
  connect: ['./commands/connect', 'connectCommand'],
};

export function isClientCommand(name: string | undefined): name is string {
  return name !== undefined && Object.hasOwn(COMMAND_MODULES, name);
}

/** The asked-for command's tree alone, or every command's (for `registry --help`, a typo's hint). */
export function clientCommands(argv: readonly string[]): Command[] {
  const only = argv[0];
  const names = isClientCommand(only) ? [only] : Object.keys(COMMAND_MODULES);
  return names.map((name) => {
    const [file, factory] = COMMAND_MODULES[name];
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require(file) as Record<string, CommandFactory>)[factory](name === only ? argv.slice(1) : []);
  });
}
