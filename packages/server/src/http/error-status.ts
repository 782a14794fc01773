// The one place an error's kind becomes an HTTP status (../errors.ts raises kinds).
import type { ErrorKind } from '../errors';

const STATUS: Record<ErrorKind, number> = {
  BadRequest: 400,
  AclDisabled: 401,
  PermissionDenied: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  TooLarge: 413,
  TooManyRequests: 429,
  NoLeader: 500,
  OutcomeUnknown: 500,
  Internal: 500,
};

export function statusOf(kind: ErrorKind): number {
  return STATUS[kind];
}
