// Who may register a check that runs a command (script and Docker checks), as Consul 1.4: the
// agent's `enable_script_checks` allows them from anywhere, `enable_local_script_checks` (which
// defaults to it) only from the agent's own config files and data dir, never from the HTTP API.
// Consul's texts, word for word (agent.addCheck): tools match on them (pure).
import type { AgentCheckDefinition } from '../schemas/agent-check';
import { isScriptCheck } from './check-spec';

export interface ScriptCheckSettings {
  /** `enable_script_checks`: through the HTTP API too. */
  remote: boolean;
  /** `enable_local_script_checks` (default: `enable_script_checks`): from config files and the data dir. */
  local: boolean;
}

/** Where a definition comes from: the HTTP API, or the agent's config files and data dir. */
export type DefinitionSource = 'remote' | 'local';

export const SCRIPTS_DISABLED_LOCAL = "Scripts are disabled on this agent; to enable, configure 'enable_script_checks' or 'enable_local_script_checks' to true";
export const SCRIPTS_DISABLED_REMOTE = "Scripts are disabled on this agent from remote calls; to enable, configure 'enable_script_checks' to true";

/** Consul's error when one of `defs` runs a command and `source` may not, else undefined. */
export function scriptChecksRefusal(defs: AgentCheckDefinition[], source: DefinitionSource, settings: ScriptCheckSettings): string | undefined {
  if (!defs.some(isScriptCheck)) return undefined;
  if (source === 'local' && !settings.local) return SCRIPTS_DISABLED_LOCAL;
  if (source === 'remote' && !settings.remote) return SCRIPTS_DISABLED_REMOTE;
  return undefined;
}
