/**
 * X.500 names. The CA only ever writes a single common name (as Consul does for roots
 * and leaves); names read from other certificates are copied as raw DER, never rebuilt.
 */
import { oid, sequence, set, utf8String } from './der-writer';
import { OID } from './oids';

export function commonNameOnly(commonName: string): Buffer {
  if (commonName === '' || commonName.length > 64) {
    throw new RangeError(`common name must be 1..64 characters (RFC 5280 ub-common-name), got ${commonName.length}`);
  }
  return sequence(set(sequence(oid(OID.commonName), utf8String(commonName))));
}
