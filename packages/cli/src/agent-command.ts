// `registry agent …`: build the configuration from flags and files, run until a signal.
// SIGTERM/SIGINT stop gracefully; a leader hands leadership over first, so a planned restart
// costs milliseconds rather than an election. SIGHUP reloads the configuration (as `systemctl
// reload` expects); an invalid one is logged and the running one kept.
import { Command } from 'commander';
import { compileCacheSettled } from './compile-cache';
import { Agent, ClientAgent, bannerLines, buildConfig, guardProcess, shrinkYoungGenerationWhenIdle, type AgentFlags, type ConfigSource } from '@registry/server';

const collect = (value: string, previous: string[] = []) => [...previous, value];
const int = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new Error(`-${name} must be an integer, got "${value}"`);
  return n;
};

export function agentCommand(): Command {
  // -config-file and -config-dir load in the order given, interleaved, as in Consul.
  const sources: ConfigSource[] = [];
  const source = (kind: ConfigSource['kind']) => (path: string, previous: string[] = []) => {
    sources.push({ kind, path });
    return [...previous, path];
  };
  return new Command('agent')
    .description('run a registry agent (a server with -server, else a client agent joining the servers of -retry-join)')
    .option('--dev', 'development mode: one bootstrapped server, data in a temporary folder')
    .option('--server', 'run as a server')
    .option('--bootstrap-expect <n>', 'servers to wait for before bootstrapping the cluster', int('bootstrap-expect'))
    .option('--non-voter', 'join as a non-voting server (Raft learner): receives the log and serves reads, never votes (config key non_voting_server)')
    .option('--node <name>', 'node name (default: the host name)')
    .option('--datacenter <dc>', 'datacenter (default dc1)')
    .option('--data-dir <dir>', 'where Raft log, snapshots and identity are kept')
    .option('--bind <addr>', 'address the server RPC/Raft port listens on (default 127.0.0.1)')
    .option('--advertise <addr>', 'address other servers use to reach this one (default: -bind)')
    .option('--client <addr>', 'address the HTTP API listens on (default 127.0.0.1)')
    .option('--http-port <port>', 'HTTP API port (default 8500)', int('http-port'))
    .option('--server-port <port>', 'server RPC/Raft port (default 8300)', int('server-port'))
    .option('--dns-port <port>', 'DNS port, UDP and TCP (default 8600; -1 disables)', int('dns-port'))
    .option('--retry-join <addr>', 'host:server-port of another server (repeatable)', collect)
    .option('--config-file <file>', 'configuration file, JSON or .hcl (repeatable; later files win)', source('file'))
    .option('--config-dir <dir>', 'directory of *.json and *.hcl configuration files, read in lexical order (repeatable)', source('dir'))
    .option('--log-level <level>', 'trace, debug, info, warn, err (default info)')
    .option('--log-json', 'log JSON lines')
    .option('--consul-compat', 'Consul wire compatibility: accept X-Consul-Token, send X-Consul-* beside X-Registry-* headers (http_config.consul_compat)')
    .option('--enable-script-checks', 'allow script and Docker checks, from the HTTP API too (enable_script_checks)')
    .option('--enable-local-script-checks', 'allow script and Docker checks from config files only (enable_local_script_checks)')
    .option('--ui', 'serve the web UI at /ui/ (on by default with -dev; config key ui)')
    .action(async (opts: AgentFlags) => {
      const flags: AgentFlags = { ...opts, configSources: sources };
      const config = buildConfig(flags);
      // Installed before start so an early SIGHUP does not kill the agent (Node's default);
      // reload errors are logged by reload itself, and the agent keeps running either way.
      let running: Agent | ClientAgent | undefined;
      // An exception or rejection nothing caught is logged as a bug and counted, not an exit
      // (docs/operations.md, "What ends the process").
      guardProcess(() => running);
      process.on('SIGHUP', () => void running?.reload().catch(() => undefined));
      // Without -server the agent is a client: no Raft, everything forwarded to the servers.
      const loadConfig = () => buildConfig(flags);
      if (!config.logJson) process.stdout.write('==> Starting Registry agent...\n');
      const agent = config.server ? await Agent.start(config, { loadConfig }) : await ClientAgent.start(config, { loadConfig });
      running = agent;
      // Start-up's modules are loaded: nothing to keep for the compile cache when they all came from it.
      compileCacheSettled();
      // What start-up allocated made V8's young generation 32 MiB; give it back once idle (issue #30).
      shrinkYoungGenerationWhenIdle();
      // Consul's start banner: what an operator checks first, the web UI's address among it. Not
      // with -log-json: there stdout is a stream of JSON lines that log pipelines parse.
      if (!config.logJson) process.stdout.write(bannerLines(agent.bannerFacts()).join('\n') + '\n');
      let signals = 0;
      const onSignal = (signal: NodeJS.Signals) => {
        signals += 1;
        if (signals > 1) process.exit(1);
        agent.logger.info({ signal }, 'caught signal, stopping');
        void agent.stop({ transfer: true });
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
      await agent.stopped;
      process.exit(agent.exitCode);
    });
}
