/**
 * Answers "may this token do X to Y?" for one token: its policies merged into
 * one, compiled into radix trees, with the default policy as the parent that
 * decides only when no rule matches.
 *
 * Build once per token (TokenResolver caches it); every check afterwards is a
 * tree walk along the name and a bit test.
 */
import { Access, grantMask, LIST_BIT, NO_RULE, READ_BIT, WRITE_BIT } from './access';
import { mergeRules, ParsedRules, Rule, RuleMap, RulesBuilder, ServiceRule } from './parsed-rules';
import { RuleTree } from './rule-tree';

/** The cluster's `acl.default_policy`. */
export type DefaultPolicy = 'allow' | 'deny';

/**
 * The static authorizer behind a token's rules, as in Consul: allow-all or deny-all
 * (from the default policy), or manage-all (everything, ACLs included) for `manage()`.
 */
export type ParentPolicy = DefaultPolicy | 'manage';

/** What decides when no rule matches. */
interface Parent {
  /** Answer for every resource except the ACL system itself. */
  readonly allow: boolean;
  /** Answer for acl read/write and snapshots: only the management parent grants them. */
  readonly manage: boolean;
}

const PARENTS: Readonly<Record<ParentPolicy, Parent>> = {
  allow: { allow: true, manage: false },
  deny: { allow: false, manage: false },
  manage: { allow: true, manage: true },
};

function compileTree<R extends Rule<Access | 'list'>>(exact: RuleMap<R>, prefix: RuleMap<R>): RuleTree {
  const tree = new RuleTree();
  for (const segment in exact) tree.insert(segment, 'exact', grantMask(exact[segment].policy));
  for (const segment in prefix) tree.insert(segment, 'prefix', grantMask(prefix[segment].policy));
  tree.seal();
  return tree;
}

/** Intentions unsaid by every policy follow the merged service policy: read for read/write, deny for deny. */
function intentionsOf(rule: ServiceRule): Access {
  if (rule.intentions !== undefined) return rule.intentions;
  return rule.policy === 'deny' ? 'deny' : 'read';
}

function compileIntentions(exact: RuleMap<ServiceRule>, prefix: RuleMap<ServiceRule>): RuleTree {
  const tree = new RuleTree();
  for (const segment in exact) tree.insert(segment, 'exact', grantMask(intentionsOf(exact[segment])));
  for (const segment in prefix) tree.insert(segment, 'prefix', grantMask(intentionsOf(prefix[segment])));
  tree.seal();
  return tree;
}

function scalarMask(access: Access | undefined): number {
  return access === undefined ? NO_RULE : grantMask(access);
}

export class Authorizer {
  private readonly parent: Parent;
  private readonly aclRule: number;
  private readonly keyringRule: number;
  private readonly operatorRule: number;
  private readonly agentRules: RuleTree;
  private readonly eventRules: RuleTree;
  private readonly keyRules: RuleTree;
  private readonly nodeRules: RuleTree;
  private readonly queryRules: RuleTree;
  private readonly serviceRules: RuleTree;
  private readonly intentionRules: RuleTree;
  private readonly sessionRules: RuleTree;

  /**
   * @param policies the rules of every policy that applies to the token, in any order
   * @param parent   consulted only when no rule matches a check; normally the default policy
   */
  constructor(policies: readonly ParsedRules[], parent: ParentPolicy) {
    this.parent = PARENTS[parent];
    const merged = mergeRules(policies);
    this.aclRule = scalarMask(merged.acl);
    this.keyringRule = scalarMask(merged.keyring);
    this.operatorRule = scalarMask(merged.operator);
    this.agentRules = compileTree(merged.agent, merged.agentPrefix);
    this.eventRules = compileTree(merged.event, merged.eventPrefix);
    this.keyRules = compileTree(merged.key, merged.keyPrefix);
    this.nodeRules = compileTree(merged.node, merged.nodePrefix);
    this.queryRules = compileTree(merged.query, merged.queryPrefix);
    this.serviceRules = compileTree(merged.service, merged.servicePrefix);
    this.intentionRules = compileIntentions(merged.service, merged.servicePrefix);
    this.sessionRules = compileTree(merged.session, merged.sessionPrefix);
  }

  private static readonly ALLOW_ALL = new Authorizer([], 'allow');
  private static readonly DENY_ALL = new Authorizer([], 'deny');
  private static readonly MANAGE_ALL = new Authorizer([], 'manage');

  /** Everything except the ACL system (ACLs disabled; default policy allow with no rules). */
  static allowAll(): Authorizer {
    return Authorizer.ALLOW_ALL;
  }

  /** Nothing at all. */
  static denyAll(): Authorizer {
    return Authorizer.DENY_ALL;
  }

  /** Everything, the ACL system included. */
  static manage(): Authorizer {
    return Authorizer.MANAGE_ALL;
  }

  /**
   * The agent's master token (`acl.tokens.agent_master`): agent write on this
   * agent's own node, node read everywhere, nothing else whatever the default policy.
   */
  static agentMaster(nodeName: string): Authorizer {
    const rules = new RulesBuilder();
    rules.addPlain('agent', nodeName, 'write');
    rules.addPlain('nodePrefix', '', 'read');
    return new Authorizer([rules.build()], 'deny');
  }

  private scalar(rule: number, bit: number): boolean {
    return rule === NO_RULE ? this.parent.allow : (rule & bit) !== 0;
  }

  private check(tree: RuleTree, name: string, bit: number): boolean {
    const rule = tree.lookup(name);
    return rule === NO_RULE ? this.parent.allow : (rule & bit) !== 0;
  }

  aclRead(): boolean {
    return this.aclRule === NO_RULE ? this.parent.manage : (this.aclRule & READ_BIT) !== 0;
  }

  aclWrite(): boolean {
    return this.aclRule === NO_RULE ? this.parent.manage : (this.aclRule & WRITE_BIT) !== 0;
  }

  /** 1.4's "management": acl write. It also unlocks secrets (token SecretIDs, query Tokens). */
  isManagement(): boolean {
    return this.aclWrite();
  }

  /** Taking or restoring a snapshot needs the same as managing ACLs. */
  snapshot(): boolean {
    return this.aclWrite();
  }

  agentRead(node: string): boolean {
    return this.check(this.agentRules, node, READ_BIT);
  }

  agentWrite(node: string): boolean {
    return this.check(this.agentRules, node, WRITE_BIT);
  }

  eventRead(name: string): boolean {
    return this.check(this.eventRules, name, READ_BIT);
  }

  eventWrite(name: string): boolean {
    return this.check(this.eventRules, name, WRITE_BIT);
  }

  keyRead(key: string): boolean {
    return this.check(this.keyRules, key, READ_BIT);
  }

  /** Recursive listing under `prefix` (only enforced when `enable_key_list_policy` is on). */
  keyList(prefix: string): boolean {
    return this.check(this.keyRules, prefix, LIST_BIT);
  }

  keyWrite(key: string): boolean {
    return this.check(this.keyRules, key, WRITE_BIT);
  }

  /**
   * Writing (deleting) everything under `prefix`: the governing prefix rule, or the
   * parent when there is none, must allow write, and no rule for anything under
   * `prefix` (exact or prefix) may say less than write.
   */
  keyWritePrefix(prefix: string): boolean {
    const { governing, subtreeAllWrite } = this.keyRules.prefixWriteScope(prefix);
    const allowedHere = governing === NO_RULE ? this.parent.allow : (governing & WRITE_BIT) !== 0;
    return allowedHere && subtreeAllWrite;
  }

  keyringRead(): boolean {
    return this.scalar(this.keyringRule, READ_BIT);
  }

  keyringWrite(): boolean {
    return this.scalar(this.keyringRule, WRITE_BIT);
  }

  nodeRead(name: string): boolean {
    return this.check(this.nodeRules, name, READ_BIT);
  }

  nodeWrite(name: string): boolean {
    return this.check(this.nodeRules, name, WRITE_BIT);
  }

  operatorRead(): boolean {
    return this.scalar(this.operatorRule, READ_BIT);
  }

  operatorWrite(): boolean {
    return this.scalar(this.operatorRule, WRITE_BIT);
  }

  /** Prepared queries, by query Name (or template prefix). */
  queryRead(name: string): boolean {
    return this.check(this.queryRules, name, READ_BIT);
  }

  queryWrite(name: string): boolean {
    return this.check(this.queryRules, name, WRITE_BIT);
  }

  serviceRead(name: string): boolean {
    return this.check(this.serviceRules, name, READ_BIT);
  }

  serviceWrite(name: string): boolean {
    return this.check(this.serviceRules, name, WRITE_BIT);
  }

  /** Intentions whose destination is `name` (the `intentions` field of service rules). */
  intentionRead(name: string): boolean {
    return this.check(this.intentionRules, name, READ_BIT);
  }

  intentionWrite(name: string): boolean {
    return this.check(this.intentionRules, name, WRITE_BIT);
  }

  /** When no intention matches a connection: always the default policy, never a token's rules. */
  intentionDefaultAllow(): boolean {
    return this.parent.allow;
  }

  /** Sessions, by the node they are tied to. */
  sessionRead(node: string): boolean {
    return this.check(this.sessionRules, node, READ_BIT);
  }

  sessionWrite(node: string): boolean {
    return this.check(this.sessionRules, node, WRITE_BIT);
  }
}
