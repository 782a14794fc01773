import {
  ANONYMOUS_TOKEN_ACCESSOR_ID,
  generateUUID,
  GLOBAL_MANAGEMENT_POLICY_ID,
  isReservedID,
  isRootSecret,
  isUUID,
  isValidPolicyName,
  policyNameError,
  uuidError,
} from '@registry/acl';

describe('policy names', () => {
  test.each(['web', 'Web-API_2', 'a', 'x'.repeat(128)])('accepts %s', (name) => {
    expect(isValidPolicyName(name)).toBe(true);
    expect(policyNameError(name)).toBeUndefined();
  });

  test.each(['x'.repeat(129), 'with space', 'dot.name', 'slash/name', 'ünicode'])('rejects %s', (name) => {
    expect(isValidPolicyName(name)).toBe(false);
    expect(policyNameError(name)).toBe(
      "Invalid Policy: invalid Name. Only alphanumeric characters, '-' and '_' are allowed",
    );
  });

  test('an empty or missing name has its own message', () => {
    expect(policyNameError('')).toBe('Invalid Policy: no Name is set');
    expect(policyNameError(undefined)).toBe('Invalid Policy: no Name is set');
  });
});

describe('UUIDs', () => {
  test('built-in IDs are UUIDs in the reserved range', () => {
    for (const id of [GLOBAL_MANAGEMENT_POLICY_ID, ANONYMOUS_TOKEN_ACCESSOR_ID]) {
      expect(isUUID(id)).toBe(true);
      expect(isReservedID(id)).toBe(true);
    }
  });

  test('generated IDs are distinct UUIDs outside the reserved range', () => {
    const ids = new Set(Array.from({ length: 200 }, generateUUID));
    expect(ids.size).toBe(200);
    for (const id of ids) {
      expect(isUUID(id)).toBe(true);
      expect(isReservedID(id)).toBe(false);
    }
  });

  test('isUUID accepts either case and rejects other shapes', () => {
    expect(isUUID('ABCDEF01-2345-6789-abcd-ef0123456789')).toBe(true);
    expect(isUUID('abcdef01-2345-6789-abcd-ef012345678')).toBe(false);
    expect(isUUID('abcdef0123-45-6789-abcd-ef0123456789')).toBe(false);
    expect(isUUID('ghijkl01-2345-6789-abcd-ef0123456789')).toBe(false);
  });

  test('uuidError explains the length first, then the format', () => {
    expect(uuidError('short')).toBe('UUID must be 36 characters');
    expect(uuidError('g'.repeat(36))).toBe('UUID improperly formatted');
    expect(uuidError(generateUUID())).toBeUndefined();
  });
});

describe('root secrets', () => {
  test('allow, deny and manage are root secrets; others are not', () => {
    expect(['allow', 'deny', 'manage'].every(isRootSecret)).toBe(true);
    expect(['anonymous', '', 'Allow'].some(isRootSecret)).toBe(false);
  });
});
