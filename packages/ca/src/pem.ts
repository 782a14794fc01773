/** PEM armour: base64 DER between BEGIN/END lines, 64 characters a line. */

export function toPem(label: string, der: Buffer): string {
  const body = der.toString('base64').replace(/.{1,64}/g, '$&\n');
  return `-----BEGIN ${label}-----\n${body}-----END ${label}-----\n`;
}

/** The DER of the first PEM block with this label; throws when there is none. */
export function fromPem(label: string, pem: string): Buffer {
  const re = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]*?)-----END ${label}-----`);
  const match = re.exec(pem);
  if (match === null) throw new SyntaxError(`no PEM block labelled ${label}`);
  return Buffer.from(match[1]!.replace(/\s+/g, ''), 'base64');
}

