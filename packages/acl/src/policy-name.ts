/** Which names a policy may have. Uniqueness is the store's business (it sees all policies). */

export const POLICY_NAME_PATTERN = /^[A-Za-z0-9\-_]{1,128}$/;

export function isValidPolicyName(name: string): boolean {
  return POLICY_NAME_PATTERN.test(name);
}

/** Consul's message for a bad policy name, or undefined when the name is fine. */
export function policyNameError(name: string | undefined): string | undefined {
  if (name === undefined || name === '') return 'Invalid Policy: no Name is set';
  if (!isValidPolicyName(name)) {
    return "Invalid Policy: invalid Name. Only alphanumeric characters, '-' and '_' are allowed";
  }
  return undefined;
}
