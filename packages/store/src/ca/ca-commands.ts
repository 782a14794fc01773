// ca.* commands. Key generation and signing happen on the leader before proposing (they are neither
// deterministic nor cheap); the FSM only records their results, so every server holds the same CA.
import { CommandError } from '../command-error';
import type { CommandHandler } from '../fsm/command-handler';
import { parseGoDuration } from '../go-duration';
import type { CaSettings, RootInput, StoredRoot } from './records';

export interface CaInitializeCommand {
  Provider: string;
  ClusterID: string;
  TrustDomain: string;
  Config: CaSettings;
  root: RootInput;
}

export interface CaRotateCommand {
  /** The root the leader saw as active when it made the new one: a stale rotation is refused. */
  previousRootId: string;
  root: RootInput;
  Config: CaSettings;
  /** RFC 3339 time of the rotation: the old root retires once leaves signed until now have expired. */
  now: string;
}

export interface CaSetConfigCommand {
  Config: CaSettings;
}

export interface CaSerialsCommand {
  count: number;
}

export interface CaPruneCommand {
  now: string;
}

/** What ca.serials answers: the first serial of the block and the Raft index that allocated it. */
export interface SerialBlock {
  first: number;
  count: number;
  index: number;
}

const MAX_SERIAL_BLOCK = 10_000;

function rootProblem(root: RootInput | undefined): string | undefined {
  if (!root || typeof root !== 'object') return 'Invalid field root: expected a root certificate';
  for (const k of ['ID', 'Name', 'SigningKeyID', 'NotBefore', 'NotAfter', 'RootCert', 'PrivateKey'] as const) {
    if (typeof root[k] !== 'string' || root[k] === '') return `Invalid field root.${k}: expected a non-empty string`;
  }
  if (!Number.isSafeInteger(root.SerialNumber) || root.SerialNumber < 1) return 'Invalid field root.SerialNumber: expected a positive integer';
  if (root.IntermediateCerts !== null && !Array.isArray(root.IntermediateCerts)) return 'Invalid field root.IntermediateCerts';
  return undefined;
}

function settingsProblem(c: CaSettings | undefined): string | undefined {
  if (!c || typeof c !== 'object') return 'Invalid field Config: expected an object';
  if (parseGoDuration(c.LeafCertTTL) === undefined) return `Invalid LeafCertTTL ${JSON.stringify(c.LeafCertTTL)}`;
  if (parseGoDuration(c.RotationPeriod) === undefined) return `Invalid RotationPeriod ${JSON.stringify(c.RotationPeriod)}`;
  return undefined;
}

function addHours(iso: string, ns: number): string {
  return new Date(Date.parse(iso) + Math.ceil(ns / 1e6)).toISOString();
}

export const caInitialize: CommandHandler<CaInitializeCommand> = (state, cmd) => {
  const problem = rootProblem(cmd.root) ?? settingsProblem(cmd.Config);
  if (problem) return new CommandError(problem);
  if (typeof cmd.ClusterID !== 'string' || cmd.ClusterID === '') return new CommandError('Invalid field ClusterID');
  // Two leaders in a row may both try; the first one's CA stays.
  if (state.ca.config) return () => false;
  return (txn) => {
    state.ca.setConfig(
      { Provider: cmd.Provider, ClusterID: cmd.ClusterID, TrustDomain: cmd.TrustDomain, Config: cmd.Config, CreateIndex: txn.index, ModifyIndex: txn.index },
      txn,
    );
    const root: StoredRoot = { ...cmd.root, ExternalTrustDomain: cmd.TrustDomain, Active: true, RetireAt: null, CreateIndex: txn.index, ModifyIndex: txn.index };
    state.ca.setRoots([root], txn);
    state.ca.raiseSerial(cmd.root.SerialNumber);
    return true;
  };
};

export const caRotate: CommandHandler<CaRotateCommand> = (state, cmd) => {
  const problem = rootProblem(cmd.root) ?? settingsProblem(cmd.Config);
  if (problem) return new CommandError(problem);
  const config = state.ca.config;
  const active = state.ca.activeRoot;
  if (!config || !active) return new CommandError('CA is not initialized');
  if (active.ID !== cmd.previousRootId) return new CommandError('the active root changed during the rotation; retry');
  if (Number.isNaN(Date.parse(cmd.now))) return new CommandError('Invalid field now: expected a timestamp');
  const leafTtlNs = parseGoDuration(config.Config.LeafCertTTL) ?? 0;
  return (txn) => {
    const kept = state.ca.roots.map((r) =>
      r.Active ? { ...r, Active: false, RetireAt: addHours(cmd.now, leafTtlNs), ModifyIndex: txn.index } : r,
    );
    const fresh: StoredRoot = { ...cmd.root, ExternalTrustDomain: config.TrustDomain, Active: true, RetireAt: null, CreateIndex: txn.index, ModifyIndex: txn.index };
    state.ca.setRoots([fresh, ...kept.filter((r) => !retired(r, cmd.now))], txn);
    state.ca.setConfig({ ...config, Config: cmd.Config, ModifyIndex: txn.index }, txn);
    state.ca.raiseSerial(cmd.root.SerialNumber);
    return true;
  };
};

export const caSetConfig: CommandHandler<CaSetConfigCommand> = (state, cmd) => {
  const problem = settingsProblem(cmd.Config);
  if (problem) return new CommandError(problem);
  const config = state.ca.config;
  if (!config) return new CommandError('CA is not initialized');
  return (txn) => {
    state.ca.setConfig({ ...config, Config: cmd.Config, ModifyIndex: txn.index }, txn);
    return true;
  };
};

export const caSerials: CommandHandler<CaSerialsCommand> = (state, cmd) => {
  if (!Number.isSafeInteger(cmd.count) || cmd.count < 1 || cmd.count > MAX_SERIAL_BLOCK) {
    return new CommandError(`Invalid field count: expected an integer in 1..${MAX_SERIAL_BLOCK}`);
  }
  return (txn): SerialBlock => ({ first: state.ca.allocateSerials(cmd.count), count: cmd.count, index: txn.index });
};

function retired(r: StoredRoot, now: string): boolean {
  return !r.Active && r.RetireAt !== null && Date.parse(r.RetireAt) <= Date.parse(now);
}

export const caPrune: CommandHandler<CaPruneCommand> = (state, cmd) => {
  if (Number.isNaN(Date.parse(cmd.now))) return new CommandError('Invalid field now: expected a timestamp');
  const roots = state.ca.roots;
  if (!roots.some((r) => retired(r, cmd.now))) return () => false;
  return (txn) => {
    state.ca.setRoots(roots.filter((r) => !retired(r, cmd.now)), txn);
    return true;
  };
};
