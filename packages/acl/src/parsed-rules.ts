/**
 * The normalised form of one policy's rule text, and how several of them merge
 * into one (a token's policies, or repeated blocks inside one policy).
 */
import { Access, Disposition, KeyAccess, strongerOf } from './access';

export interface Rule<A extends Disposition = Access> {
  readonly policy: A;
}

/**
 * `intentions` stays undefined when the rule text did not say it: the default
 * (read for a read/write service rule, deny for a deny rule) is applied after
 * merging, as Consul does, so an unsaid value never outranks a said one.
 */
export interface ServiceRule extends Rule<Access> {
  readonly intentions?: Access;
}

/** Keyed by the rule's segment (a name for exact rules, a prefix for `_prefix` rules). */
export type RuleMap<R> = Readonly<Record<string, R>>;

export interface ParsedRules {
  readonly acl?: Access;
  readonly keyring?: Access;
  readonly operator?: Access;
  readonly agent: RuleMap<Rule>;
  readonly agentPrefix: RuleMap<Rule>;
  readonly event: RuleMap<Rule>;
  readonly eventPrefix: RuleMap<Rule>;
  readonly key: RuleMap<Rule<KeyAccess>>;
  readonly keyPrefix: RuleMap<Rule<KeyAccess>>;
  readonly node: RuleMap<Rule>;
  readonly nodePrefix: RuleMap<Rule>;
  readonly query: RuleMap<Rule>;
  readonly queryPrefix: RuleMap<Rule>;
  readonly service: RuleMap<ServiceRule>;
  readonly servicePrefix: RuleMap<ServiceRule>;
  readonly session: RuleMap<Rule>;
  readonly sessionPrefix: RuleMap<Rule>;
}

export type ScalarResource = 'acl' | 'keyring' | 'operator';
export type ServiceResource = 'service' | 'servicePrefix';
export type PlainResource = Exclude<keyof ParsedRules, ScalarResource | ServiceResource>;

export const SCALAR_RESOURCES: readonly ScalarResource[] = ['acl', 'keyring', 'operator'];
export const SERVICE_RESOURCES: readonly ServiceResource[] = ['service', 'servicePrefix'];
export const PLAIN_RESOURCES: readonly PlainResource[] = [
  'agent', 'agentPrefix', 'event', 'eventPrefix', 'key', 'keyPrefix', 'node', 'nodePrefix',
  'query', 'queryPrefix', 'session', 'sessionPrefix',
];

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Writable<R> = Record<string, R>;

/** A record without a prototype, so a segment named `__proto__` or `constructor` is just a key. */
function newRuleMap<R>(): Writable<R> {
  return Object.create(null) as Writable<R>;
}

export function emptyRules(): ParsedRules {
  return {
    agent: newRuleMap(), agentPrefix: newRuleMap(), event: newRuleMap(), eventPrefix: newRuleMap(),
    key: newRuleMap(), keyPrefix: newRuleMap(), node: newRuleMap(), nodePrefix: newRuleMap(),
    query: newRuleMap(), queryPrefix: newRuleMap(), service: newRuleMap(), servicePrefix: newRuleMap(),
    session: newRuleMap(), sessionPrefix: newRuleMap(),
  };
}

/**
 * Builds a ParsedRules by adding rules one at a time; a rule for a segment that
 * already has one is combined with it by precedence (deny > write > list > read).
 */
export class RulesBuilder {
  private readonly rules: Mutable<ParsedRules> = emptyRules();

  setScalar(resource: ScalarResource, access: Access): void {
    this.rules[resource] = strongerOf(this.rules[resource], access);
  }

  addPlain(resource: PlainResource, segment: string, access: Disposition): void {
    const map = this.rules[resource] as Writable<Rule<Disposition>>;
    const policy = strongerOf(map[segment]?.policy, access) as Disposition;
    map[segment] = { policy };
  }

  addService(resource: ServiceResource, segment: string, rule: ServiceRule): void {
    const map = this.rules[resource] as Writable<ServiceRule>;
    const existing = map[segment];
    const policy = strongerOf(existing?.policy, rule.policy) as Access;
    const intentions = strongerOf(existing?.intentions, rule.intentions);
    map[segment] = intentions === undefined ? { policy } : { policy, intentions };
  }

  add(source: ParsedRules): void {
    for (const resource of SCALAR_RESOURCES) {
      const access = source[resource];
      if (access !== undefined) this.setScalar(resource, access);
    }
    for (const resource of PLAIN_RESOURCES) {
      const map: RuleMap<Rule<Disposition>> = source[resource];
      for (const segment in map) this.addPlain(resource, segment, map[segment].policy);
    }
    for (const resource of SERVICE_RESOURCES) {
      const map = source[resource];
      for (const segment in map) this.addService(resource, segment, map[segment]);
    }
  }

  build(): ParsedRules {
    return this.rules;
  }
}

/** One policy equivalent to all of `policies` together, independent of their order. */
export function mergeRules(policies: readonly ParsedRules[]): ParsedRules {
  const builder = new RulesBuilder();
  for (const policy of policies) builder.add(policy);
  return builder.build();
}
