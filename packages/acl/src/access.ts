/**
 * The vocabulary of a rule: what a rule may say about a resource, how two rules
 * about the same name combine, and what each answer grants.
 */

/** What a rule on any resource may say. */
export type Access = 'read' | 'write' | 'deny';

/** Key rules may also say `list` (read plus recursive listing). */
export type KeyAccess = Access | 'list';

/** Any disposition a rule may carry. */
export type Disposition = KeyAccess;

/** The permission a check asks for. */
export type Permission = 'read' | 'list' | 'write';

const RANK: Readonly<Record<Disposition, number>> = { read: 1, list: 2, write: 3, deny: 4 };

/**
 * Combines two rules about the same resource and name: deny > write > list > read,
 * whatever order the policies come in. `undefined` means "not said" and loses to anything.
 */
export function strongerOf<A extends Disposition>(a: A | undefined, b: A | undefined): A | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return RANK[b] > RANK[a] ? b : a;
}

export function isAccess(value: unknown): value is Access {
  return value === 'read' || value === 'write' || value === 'deny';
}

export function isKeyAccess(value: unknown): value is KeyAccess {
  return isAccess(value) || value === 'list';
}

/*
 * Compiled form used by the Authorizer: a disposition becomes a bit mask of the
 * permissions it grants, so a check is one AND. `NO_RULE` marks "nothing said here".
 */
export const READ_BIT = 1;
export const LIST_BIT = 2;
export const WRITE_BIT = 4;
export const NO_RULE = -1;

const GRANTS: Readonly<Record<Disposition, number>> = {
  read: READ_BIT,
  list: READ_BIT | LIST_BIT,
  write: READ_BIT | LIST_BIT | WRITE_BIT,
  deny: 0,
};

export function grantMask(disposition: Disposition): number {
  return GRANTS[disposition];
}

export function permissionBit(permission: Permission): number {
  return permission === 'read' ? READ_BIT : permission === 'list' ? LIST_BIT : WRITE_BIT;
}
