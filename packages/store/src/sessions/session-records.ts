// A session as the store keeps it and as the API shows it (Consul's structs.Session).

export type SessionBehavior = 'release' | 'delete';

export interface SessionData {
  ID: string;
  Name: string;
  /** The node name as given at create time. */
  Node: string;
  /** Check IDs on that node; null when the request sent `"Checks": null`. */
  Checks: string[] | null;
  /** Nanoseconds, as requested (capped at 60 s only when applied). */
  LockDelay: number;
  Behavior: SessionBehavior;
  /** As requested ("30s"), '' for none. */
  TTL: string;
}

export interface SessionRecord extends SessionData {
  CreateIndex: number;
  ModifyIndex: number;
}

/** The longest lock-delay ever applied (Consul's MaxLockDelay). */
export const MAX_LOCK_DELAY_NS = 60e9;

export const SESSIONS = 'sessions';
