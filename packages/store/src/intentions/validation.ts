// Intention validation (consul-behaviour §6.2), pure: defaults first, then every problem collected,
// so a client sees all of them at once.
import type { IntentionInput } from './records';
import { DEFAULT_NAMESPACE, SOURCE_TYPE } from './records';
import { WILDCARD } from './precedence';

const MAX_DESCRIPTION = 512;
const MAX_META_PAIRS = 64;
const MAX_META_KEY = 128;
const MAX_META_VALUE = 512;

export interface NormalisedIntention {
  Description: string;
  SourceNS: string;
  SourceName: string;
  DestinationNS: string;
  DestinationName: string;
  SourceType: string;
  Action: string;
  DefaultAddr: string;
  DefaultPort: number;
  Meta: Record<string, string>;
}

/** Fill Consul's defaults: SourceType → registry, namespaces → default, Meta → {}. */
export function normaliseIntention(i: IntentionInput): NormalisedIntention {
  return {
    Description: i.Description ?? '',
    SourceNS: i.SourceNS || DEFAULT_NAMESPACE,
    SourceName: i.SourceName ?? '',
    DestinationNS: i.DestinationNS || DEFAULT_NAMESPACE,
    DestinationName: i.DestinationName ?? '',
    SourceType: i.SourceType || SOURCE_TYPE,
    Action: i.Action ?? '',
    DefaultAddr: i.DefaultAddr ?? '',
    DefaultPort: i.DefaultPort ?? 0,
    Meta: { ...(i.Meta ?? {}) },
  };
}

function wildcardProblems(field: string, value: string): string[] {
  if (value === '') return [`${field} must be set`];
  if (value !== WILDCARD && value.includes(WILDCARD)) return [`${field}: wildcard character '*' cannot be used with partial values`];
  return [];
}

/**
 * Every problem with a normalised intention, [] when it is valid. `otherSourceTypes`: SourceType
 * values accepted besides `registry` (`consul` when the write came through consul_compat).
 */
export function intentionProblems(i: NormalisedIntention, otherSourceTypes: readonly string[] = []): string[] {
  const problems = [
    ...wildcardProblems('SourceNS', i.SourceNS),
    ...wildcardProblems('SourceName', i.SourceName),
    ...wildcardProblems('DestinationNS', i.DestinationNS),
    ...wildcardProblems('DestinationName', i.DestinationName),
  ];
  if (i.SourceNS === WILDCARD && i.SourceName !== '' && i.SourceName !== WILDCARD) {
    problems.push('SourceName: exact value cannot follow wildcard namespace');
  }
  if (i.DestinationNS === WILDCARD && i.DestinationName !== '' && i.DestinationName !== WILDCARD) {
    problems.push('DestinationName: exact value cannot follow wildcard namespace');
  }
  if (i.Description.length > MAX_DESCRIPTION) problems.push(`Description exceeds maximum length ${MAX_DESCRIPTION}`);
  const meta = Object.entries(i.Meta);
  if (meta.length > MAX_META_PAIRS) problems.push(`Meta exceeds maximum element count ${MAX_META_PAIRS}`);
  for (const [k, v] of meta) {
    if (k.length > MAX_META_KEY) problems.push(`Meta key ${JSON.stringify(k)} exceeds maximum length ${MAX_META_KEY}`);
    if (typeof v !== 'string') problems.push(`Meta value for key ${JSON.stringify(k)} must be a string`);
    else if (v.length > MAX_META_VALUE) problems.push(`Meta value for key ${JSON.stringify(k)} exceeds maximum length ${MAX_META_VALUE}`);
  }
  if (i.Action !== 'allow' && i.Action !== 'deny') problems.push(`Action must be set to 'allow' or 'deny'`);
  if (i.SourceType !== SOURCE_TYPE && !otherSourceTypes.includes(i.SourceType)) problems.push(`SourceType must be set to '${SOURCE_TYPE}'`);
  return problems;
}

/** One line for the HTTP body (DECISIONS.md: plain text, one line). */
export function problemsMessage(problems: string[]): string {
  if (problems.length === 1) return problems[0]!;
  return `${problems.length} errors occurred: ${problems.join('; ')}`;
}
