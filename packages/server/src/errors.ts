// Errors by kind, raised where they happen (endpoints, rpc, acl, connect, ...). Only the HTTP edge
// knows statuses (http/error-status.ts maps kinds once, like Consul's agent/http.go `wrap`); the
// RPC envelope carries the kind, so a request forwarded to the leader fails the same way there
// as here. DECISIONS.md: 400 bad request, 403 ACL, 404 missing, 405 verb, 500 server fault or
// unknown outcome.

export type ErrorKind =
  | 'BadRequest'
  | 'AclDisabled'
  | 'PermissionDenied'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'TooLarge'
  | 'TooManyRequests'
  | 'NoLeader'
  | 'OutcomeUnknown'
  | 'Internal';

export class RegistryError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** Response headers the error implies (e.g. `Allow` for a 405). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

export const NO_LEADER = 'No cluster leader';
/** A write that may or may not have been applied (DECISIONS.md: 500 for an unknown outcome). */
export const OUTCOME_UNKNOWN = 'outcome unknown, the write may have been applied';
export const NO_PATH_TO_DC = 'No path to datacenter';

export const badRequest = (message: string) => new RegistryError('BadRequest', message);
export const forbidden = (message = 'Permission denied') => new RegistryError('PermissionDenied', message);
export const notFound = (message: string) => new RegistryError('NotFound', message);
export const tooLarge = (message: string) => new RegistryError('TooLarge', message);
export const tooManyRequests = (message: string) => new RegistryError('TooManyRequests', message);
export const aclDisabled = (message: string) => new RegistryError('AclDisabled', message);
export const methodNotAllowed = (method: string, allow: string) => new RegistryError('MethodNotAllowed', `method ${method} not allowed`, { Allow: allow });
export const serverError = (message: string) => new RegistryError('Internal', message);
export const noLeader = () => new RegistryError('NoLeader', NO_LEADER);
/** A server out of its cluster (removed, or left: cluster/membership.ts) refuses at once, saying why. */
export const notAMember = (reason: string) => new RegistryError('NoLeader', `${NO_LEADER}: ${reason}`);
export const outcomeUnknown = (cause: string) => new RegistryError('OutcomeUnknown', `${OUTCOME_UNKNOWN}: ${cause}`);

/** The caller's mistake (retrying the same request cannot help), as opposed to a server fault. */
export function isClientError(err: unknown): boolean {
  return err instanceof RegistryError && !['NoLeader', 'OutcomeUnknown', 'Internal'].includes(err.kind);
}
