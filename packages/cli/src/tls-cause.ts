// TLS failures in the words of Go's crypto/tls and crypto/x509, as Consul's CLI prints them
// (`x509: certificate signed by unknown authority`), instead of OpenSSL's codes and alert dumps.

/** Node's certificate-verification codes that Go reports as an unknown authority. */
const UNKNOWN_AUTHORITY = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
]);

/** OpenSSL's alert descriptions where Go names them differently (tls/alert.go). */
const GO_ALERTS: Record<string, string> = {
  'unknown ca': 'unknown certificate authority',
  'bad certificate': 'bad certificate',
  'certificate required': 'certificate required',
  'handshake failure': 'handshake failure',
  'certificate expired': 'expired certificate',
};

/** Go's wording of a TLS error, or undefined when `err` is not one. */
export function tlsCause(err: NodeJS.ErrnoException & { host?: string; cert?: { subjectaltname?: string } }): string | undefined {
  const code = err.code ?? '';
  if (UNKNOWN_AUTHORITY.has(code)) return 'x509: certificate signed by unknown authority';
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return 'x509: certificate has expired or is not yet valid';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const names = (err.cert?.subjectaltname ?? '')
      .split(', ')
      .map((n) => n.replace(/^(DNS|IP Address):/, ''))
      .filter(Boolean);
    return `x509: certificate is valid for ${names.join(', ')}, not ${err.host ?? 'the name asked for'}`;
  }
  // The peer refused the handshake: OpenSSL puts the alert in a long message
  // (`…:tlsv13 alert certificate required:…:SSL alert number 116`).
  const alert = /\btlsv1\d? alert ([a-z ]+?)(?::|$)/.exec(err.message ?? '');
  if (alert) return `remote error: tls: ${GO_ALERTS[alert[1]] ?? alert[1]}`;
  if (code.startsWith('ERR_SSL_')) return `tls: ${err.message.replace(/^[0-9A-F]+:error:[0-9A-F]+:SSL routines:[^:]*:/, '').split(':')[0]}`;
  return undefined;
}
