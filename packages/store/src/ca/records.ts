// The CA state kept in Raft (Consul's CAConfiguration and CARoot tables, plus the serial counter).
// A root's private key lives here so any server that becomes leader can sign; reads never show it.

/** Provider settings, as Consul shows them under `Config` (durations as Go strings). */
export interface CaSettings {
  LeafCertTTL: string;
  RotationPeriod: string;
  /** "ec" or "rsa" (registry names the built-in provider's key choice like Consul 1.5). */
  PrivateKeyType: string;
  PrivateKeyBits: number;
}

export interface CaConfigRecord {
  Provider: string;
  /** Never shown by reads: Consul hides it too. */
  ClusterID: string;
  TrustDomain: string;
  Config: CaSettings;
  CreateIndex: number;
  ModifyIndex: number;
}

/** A root as the CA library makes it (the fields of @registry/ca's RootCA). */
export interface RootInput {
  ID: string;
  Name: string;
  SerialNumber: number;
  SigningKeyID: string;
  NotBefore: string;
  NotAfter: string;
  RootCert: string;
  PrivateKey: string;
  IntermediateCerts: string[] | null;
}

export interface StoredRoot extends RootInput {
  ExternalTrustDomain: string;
  Active: boolean;
  /** When an inactive root's last leaves have expired and it may leave the list (null while active). */
  RetireAt: string | null;
  CreateIndex: number;
  ModifyIndex: number;
}

/** Consul's CARoot JSON, without the private key. */
export interface CaRootOut {
  ID: string;
  Name: string;
  SerialNumber: number;
  SigningKeyID: string;
  ExternalTrustDomain: string;
  NotBefore: string;
  NotAfter: string;
  RootCert: string;
  IntermediateCerts: string[] | null;
  Active: boolean;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface CaRootsOut {
  ActiveRootID: string;
  TrustDomain: string;
  Roots: CaRootOut[];
}

export interface CaConfigOut {
  Provider: string;
  Config: CaSettings;
  CreateIndex: number;
  ModifyIndex: number;
}

export function rootOut(r: StoredRoot): CaRootOut {
  return {
    ID: r.ID,
    Name: r.Name,
    SerialNumber: r.SerialNumber,
    SigningKeyID: r.SigningKeyID,
    ExternalTrustDomain: r.ExternalTrustDomain,
    NotBefore: r.NotBefore,
    NotAfter: r.NotAfter,
    RootCert: r.RootCert,
    IntermediateCerts: r.IntermediateCerts ? [...r.IntermediateCerts] : null,
    Active: r.Active,
    CreateIndex: r.CreateIndex,
    ModifyIndex: r.ModifyIndex,
  };
}
