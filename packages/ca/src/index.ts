/**
 * @registry/ca — the built-in certificate authority. Pure functions over plain data
 * (PEM strings, numbers): no I/O, no persistence. The server keeps CA state in Raft,
 * allocates serial numbers there, and calls this library on the leader.
 */
export type { Leaf, RootCA } from './types';
export { CertificateRequestError, SpiffeIdError } from './errors';
export {
  agentURI, formatSpiffeId, parseSpiffeURI, serviceURI, signingURI, trustDomainFor,
  type AgentSpiffeId, type ServiceSpiffeId, type SigningSpiffeId, type SpiffeId,
} from './spiffe';
export type { KeyType } from './keys';
export {
  certificateFingerprint, DEFAULT_KEY_TYPE, DEFAULT_ROOT_TTL_HOURS, generateRoot, ROOT_NAME, rootTrustDomain,
  type GenerateRootOptions,
} from './root';
export { createCSR, type CreateCSROptions, type CreatedCSR } from './csr';
export {
  DEFAULT_LEAF_TTL_HOURS, signLeaf, signLeafForService, type SignLeafForServiceOptions, type SignLeafOptions,
} from './leaf';
export { crossSign, DEFAULT_CROSS_SIGN_TTL_HOURS, type CrossSignOptions } from './rotation';
export { formatSerialNumber, parseSerialNumber } from './serial';
export { createAgentCa, createAgentCert, type AgentCaOptions, type AgentCertOptions, type AgentTlsFiles } from './agent-tls';
