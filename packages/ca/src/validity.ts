/**
 * Certificate validity windows. Certificates store whole seconds, so every instant is
 * truncated first and the ISO strings we return are exactly what the certificate says
 * (RFC 3339 without fractions, as Go prints a time.Time: `2018-10-10T12:00:00Z`).
 */

export const HOUR_MS = 3_600_000;

export interface Validity {
  notBefore: Date;
  notAfter: Date;
}

export function wholeSeconds(date: Date): Date {
  const ms = date.getTime();
  if (!Number.isFinite(ms)) throw new RangeError('invalid date');
  return new Date(Math.floor(ms / 1000) * 1000);
}

/** [start − backdateMs, start − backdateMs + ttlHours), truncated to seconds. */
export function validityFor(now: Date, ttlHours: number, backdateMs = 0): Validity {
  if (!(Number.isFinite(ttlHours) && ttlHours > 0)) throw new RangeError(`ttlHours must be positive, got ${ttlHours}`);
  const notBefore = wholeSeconds(new Date(now.getTime() - backdateMs));
  const notAfter = wholeSeconds(new Date(notBefore.getTime() + ttlHours * HOUR_MS));
  return { notBefore, notAfter };
}

export function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
