/**
 * Errors the CA throws for bad input from outside (a URI or a CSR), as opposed to
 * programming errors. The server maps these to 400; anything else is a 500.
 */

/** A string that is not a well-formed SPIFFE ID of a kind we know. */
export class SpiffeIdError extends Error {
  override readonly name = 'SpiffeIdError';
}

/** A certificate signing request that the CA refuses to sign. */
export class CertificateRequestError extends Error {
  override readonly name = 'CertificateRequestError';
}
