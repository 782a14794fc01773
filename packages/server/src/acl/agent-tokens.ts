// The agent's own ACL tokens, changeable at run time (Consul's PUT /v1/agent/token/:kind): the
// default token (anonymous requests act with it), the agent token, the agent master token and the
// replication token. They live in the agent's configuration object, so every reader of it sees a
// new value at once; with `acl.enable_token_persistence` they are also written to
// `<data-dir>/acl-tokens.json` (Consul's file and keys) and win over the config files on start.
import { readFile } from 'node:fs/promises';
import { writeFileDurably } from '../runtime/durable-file';
import { join } from 'node:path';
import { addLogSecret } from '../runtime/logger';

export type AgentTokenKind = 'default' | 'agent' | 'agent_master' | 'replication';

/** The path segment of /v1/agent/token/:kind → the token it sets (legacy names included). */
const KINDS: Record<string, AgentTokenKind> = {
  default: 'default',
  agent: 'agent',
  agent_master: 'agent_master',
  replication: 'replication',
  acl_token: 'default',
  acl_agent_token: 'agent',
  acl_agent_master_token: 'agent_master',
  acl_replication_token: 'replication',
};

/** The configuration's token fields, by kind. */
const FIELDS = { default: 'default', agent: 'agent', agent_master: 'agentMaster', replication: 'replication' } as const;

export interface AgentTokenFields {
  default?: string;
  agent?: string;
  agentMaster?: string;
  replication?: string;
}

export const PERSISTED_TOKENS_FILE = 'acl-tokens.json';

export function agentTokenKind(segment: string): AgentTokenKind | undefined {
  return Object.prototype.hasOwnProperty.call(KINDS, segment) ? KINDS[segment] : undefined;
}

export class AgentTokens {
  private writing: Promise<void> = Promise.resolve();

  /**
   * @param tokens the token record every reader of `acl.tokens` holds (changed in place: the one
   *   part of the configuration that is state, not a snapshot — agent/config-snapshot.ts)
   * @param dataDir where to persist them, or undefined when persistence is off
   */
  constructor(
    private readonly tokens: AgentTokenFields,
    private readonly dataDir: string | undefined,
  ) {}

  get persistent(): boolean {
    return this.dataDir !== undefined;
  }

  /** Apply the persisted tokens over the configured ones (start-up; nothing when there are none). */
  async load(): Promise<void> {
    if (!this.dataDir) return;
    let saved: Record<string, unknown>;
    try {
      saved = JSON.parse(await readFile(join(this.dataDir, PERSISTED_TOKENS_FILE), 'utf8')) as Record<string, unknown>;
    } catch {
      return; // none yet (or unreadable: Consul then starts with the configured ones too)
    }
    for (const kind of Object.keys(FIELDS) as AgentTokenKind[]) {
      const v = saved[kind];
      if (typeof v === 'string' && v !== '') {
        this.tokens[FIELDS[kind]] = v;
        addLogSecret(v);
      }
    }
  }

  /**
   * A reload: the config files' tokens, then (with persistence) the persisted ones over them, as
   * Consul's reload does. Answers the kinds whose value changed.
   */
  async reload(fromFiles: AgentTokenFields): Promise<AgentTokenKind[]> {
    const before = { ...this.tokens };
    for (const kind of Object.keys(FIELDS) as AgentTokenKind[]) {
      addLogSecret(fromFiles[FIELDS[kind]]);
      this.tokens[FIELDS[kind]] = fromFiles[FIELDS[kind]];
    }
    await this.load();
    return (Object.keys(FIELDS) as AgentTokenKind[]).filter((kind) => before[FIELDS[kind]] !== this.tokens[FIELDS[kind]]);
  }

  get(kind: AgentTokenKind): string | undefined {
    return this.tokens[FIELDS[kind]];
  }

  /** Use `token` for `kind` from now on; resolves once it is on disk when persistence is on. */
  async set(kind: AgentTokenKind, token: string): Promise<void> {
    addLogSecret(token);
    this.tokens[FIELDS[kind]] = token === '' ? undefined : token;
    if (!this.dataDir) return;
    const dir = this.dataDir;
    const body: Record<string, string> = {};
    for (const k of Object.keys(FIELDS) as AgentTokenKind[]) {
      const v = this.tokens[FIELDS[k]];
      if (v) body[k] = v;
    }
    // Writes are serialised and durable (temp file, fsync, rename, fsync of the directory): the
    // file is always one complete set of tokens, and a token set with 200 survives a power cut.
    const write = () => writeFileDurably(join(dir, PERSISTED_TOKENS_FILE), JSON.stringify(body));
    this.writing = this.writing.then(write, write);
    await this.writing;
  }
}
