/** The plain data the CA hands back; the server stores it through Raft and serves parts of it. */

/**
 * A root CA, shaped like Consul's CARoot minus the fields the server owns (Active,
 * CreateIndex, ModifyIndex). `PrivateKey` must never leave the servers.
 */
export interface RootCA {
  /** SHA-1 fingerprint of the certificate's DER, lower-case colon-hex (Consul's root ID). */
  ID: string;
  Name: string;
  SerialNumber: number;
  /** Colon-hex of the root's subject key identifier (= the authority key id of what it signs). */
  SigningKeyID: string;
  NotBefore: string;
  NotAfter: string;
  RootCert: string;
  PrivateKey: string;
  /** Certificates a client may need to chain this root's leaves to an older root (see crossSign). */
  IntermediateCerts: string[] | null;
}

/** An issued leaf certificate, shaped like Consul's IssuedCert without the key and indexes. */
export interface Leaf {
  /** Colon-hex serial, e.g. "0a:1b". */
  SerialNumber: string;
  /** The leaf, followed by the root's IntermediateCerts when there are any. */
  CertPEM: string;
  Service: string;
  ServiceURI: string;
  ValidAfter: string;
  ValidBefore: string;
}
