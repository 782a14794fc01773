/**
 * X.500 names. The CA only ever writes a single common name (as Consul does for roots
 * and leaves), with forge's Name encoder; names read from other certificates are reused
 * as parsed, never rebuilt.
 */
import { asn1, pki, type Asn1, type TagClass } from './asn1';
import { OID } from './oids';

export function commonNameOnly(commonName: string): Asn1 {
  if (commonName === '' || commonName.length > 64) {
    throw new RangeError(`common name must be 1..64 characters (RFC 5280 ub-common-name), got ${commonName.length}`);
  }
  return pki.distinguishedNameToAsn1({
    // forge reads valueTagClass as the string type of the value (UTF8String, encoded by forge).
    attributes: [{ type: OID.commonName, value: commonName, valueTagClass: asn1.Type.UTF8 as number as TagClass }],
  });
}
