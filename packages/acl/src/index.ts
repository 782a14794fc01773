/**
 * @registry/acl — the ACL rule language, policy merging, the Authorizer, token
 * resolution, and the small domain rules of tokens and policies. Pure: no HTTP,
 * no Raft, no store.
 */
export type { Access, KeyAccess, Disposition, Permission } from './access';
export type { ParsedRules, Rule, ServiceRule, RuleMap } from './parsed-rules';
export { emptyRules, mergeRules } from './parsed-rules';
export { parseRules, parseLegacyRules, RuleError } from './rules-parser';
export { Authorizer } from './authorizer';
export type { DefaultPolicy, ParentPolicy } from './authorizer';
export { TokenResolver, embeddedRules } from './token-resolver';
export type { TokenLookup, ResolvableToken, ResolvablePolicy, TokenResolverOptions } from './token-resolver';
export { blake2b, tokenHash, policyHash } from './hash';
export type { TokenHashInput, PolicyHashInput } from './hash';
export { POLICY_NAME_PATTERN, isValidPolicyName, policyNameError } from './policy-name';
export { isUUID, uuidError, isReservedID, generateUUID } from './uuid';
export {
  GLOBAL_MANAGEMENT_POLICY_ID,
  GLOBAL_MANAGEMENT_POLICY_NAME,
  GLOBAL_MANAGEMENT_POLICY_DESCRIPTION,
  GLOBAL_MANAGEMENT_RULES,
  ANONYMOUS_TOKEN_ACCESSOR_ID,
  ANONYMOUS_TOKEN_SECRET,
  ANONYMOUS_TOKEN_DESCRIPTION,
  BOOTSTRAP_TOKEN_DESCRIPTION,
  MASTER_TOKEN_DESCRIPTION,
  RESERVED_ID_PREFIX,
  ROOT_TOKEN_ERROR,
  isRootSecret,
} from './builtins';
export { translateLegacyRules, TranslateError } from './legacy-translate';
export type { RuleSyntax } from './rules-parser';
