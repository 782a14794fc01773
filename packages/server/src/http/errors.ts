// Errors an endpoint may throw; the HTTP layer maps each to its status and a plain-text body
// (DECISIONS.md: 400 bad request, 403 ACL, 404 missing, 405 verb, 500 server fault).

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const forbidden = (message = 'Permission denied') => new HttpError(403, message);
export const notFound = (message: string) => new HttpError(404, message);
export const serverError = (message: string) => new HttpError(500, message);

export const NO_LEADER = 'No cluster leader';
/** A write that may or may not have been applied (DECISIONS.md: 500 for an unknown outcome). */
export const OUTCOME_UNKNOWN = 'outcome unknown, the write may have been applied';
export const NO_PATH_TO_DC = 'No path to datacenter';
