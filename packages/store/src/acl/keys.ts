// Watch keys of the ACL tables: any token change bumps ACL_TOKENS, any policy change ACL_POLICIES.
// Token reads show policy names, so they depend on both.
export const ACL_TOKENS = 'acl-tokens';
export const ACL_POLICIES = 'acl-policies';
