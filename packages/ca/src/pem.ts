/** PEM armour (RFC 7468) through forge.pem: base64 DER between BEGIN/END lines, 64 characters a line. */
import { fromBinary, pem, toBinary } from './asn1';

export function toPem(label: string, der: Buffer): string {
  // forge ends lines with CRLF; Go's encoding/pem, and so Consul, use LF, as we always have.
  return pem.encode({ type: label, body: toBinary(der) }).replace(/\r\n/g, '\n');
}

/** The DER of the first PEM block with this label; throws SyntaxError when there is none. */
export function fromPem(label: string, text: string): Buffer {
  let messages;
  try {
    messages = pem.decode(text);
  } catch (err) {
    throw new SyntaxError(`no PEM block labelled ${label}: ${(err as Error).message}`);
  }
  const message = messages.find((m) => m.type === label);
  if (message === undefined) throw new SyntaxError(`no PEM block labelled ${label}`);
  if (message.procType) throw new SyntaxError(`PEM block ${label} is encrypted or has headers`);
  return fromBinary(message.body);
}
