// Whether a connection from a source service to a destination is allowed (Consul's intention check
// and connect authorize): the first intention, in evaluation order, whose source covers the caller
// decides; with none, the ACL default decides. Pure: the caller supplies the destination's matches.
import { describeIntention, WILDCARD, type IntentionOut } from '@registry/store';

export interface ServiceName {
  namespace: string;
  name: string;
}

/** How the agent is configured when no intention matches. */
export interface IntentionDefaults {
  aclsEnabled: boolean;
  /** `acl.default_policy == "allow"`. */
  defaultAllow: boolean;
}

export interface Decision {
  allowed: boolean;
  reason: string;
  /** The deciding intention, if one matched. */
  intention?: IntentionOut;
}

/** Consul compares the source side exactly (case-sensitive) here, unlike the destination lookup. */
export function firstSourceMatch(matches: readonly IntentionOut[], source: ServiceName): IntentionOut | undefined {
  return matches.find(
    (i) => (i.SourceNS === WILDCARD || i.SourceNS === source.namespace) && (i.SourceName === WILDCARD || i.SourceName === source.name),
  );
}

export function decideIntention(destinationMatches: readonly IntentionOut[], source: ServiceName, defaults: IntentionDefaults): Decision {
  const intention = firstSourceMatch(destinationMatches, source);
  if (intention) {
    return { allowed: intention.Action === 'allow', reason: `Matched intention: ${describeIntention(intention)}`, intention };
  }
  if (!defaults.aclsEnabled) return { allowed: true, reason: 'ACLs disabled, access is allowed by default' };
  return { allowed: defaults.defaultAllow, reason: 'Default behavior configured by ACLs' };
}
