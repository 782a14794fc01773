// Consul's HTTP client flags (command/flags/http.go), declared once for every HTTP command.
import { Command, Option } from 'commander';
import { Client, type HttpFlags } from './http-client';

export function withClientFlags(c: Command): Command {
  return c
    .option('--http-addr <addr>', 'agent HTTP(S) address (env REGISTRY_HTTP_ADDR, default 127.0.0.1:8500)')
    .option('--token <token>', 'ACL token (env REGISTRY_HTTP_TOKEN)')
    .option('--token-file <file>', 'file holding the ACL token (env REGISTRY_HTTP_TOKEN_FILE)')
    .option('--ca-file <file>', 'CA bundle to verify the agent\'s certificate (env REGISTRY_CACERT)')
    .option('--ca-path <dir>', 'directory of CA certificates (env REGISTRY_CAPATH)')
    .option('--client-cert <file>', 'client certificate for TLS (env REGISTRY_CLIENT_CERT)')
    .option('--client-key <file>', 'client key for TLS (env REGISTRY_CLIENT_KEY)')
    .option('--tls-server-name <name>', 'server name for SNI (env REGISTRY_TLS_SERVER_NAME)');
}

/** Client flags plus -datacenter and -stale, for commands whose requests go to the servers. */
export function withServerFlags(c: Command): Command {
  return withClientFlags(c)
    .option('--datacenter <dc>', 'datacenter to query (default: the agent\'s)')
    .option('--stale', 'allow any server to answer reads, not only the leader');
}

export function clientOf(opts: HttpFlags): Client {
  return new Client(opts);
}

/** -format=pretty|json where Consul has it. */
export function formatOption(): Option {
  return new Option('--format <format>', 'output format').choices(['pretty', 'json']).default('pretty');
}
