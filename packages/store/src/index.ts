// @registry/store: the replicated state machine (tables, indexes, watches, snapshots).
export { Store, type StoreOptions, type NodeCoordinate } from './store';
export { ARENA_BYTES, ARENA_MIN_SNAPSHOT_BYTES, type ArenaOptions, type RestoreSource } from './snapshot-arenas';
export { WRITE_ARENA_BYTES } from './kv/value-arenas';
export { StoreSnapshot, SnapshotReleasedError, type PersistOptions } from './snapshot-handle';
export { CommandError } from './command-error';
export { encodeCommand, decodeCommand, encodeEntry, encodeStamped, decodeEntry, type Entry, type Command, type CommandType, type CoordinateUpdate } from './commands';
export { REQUEST_WINDOW, type RequestStamp } from './requests/request-table';
export type { QueryResult } from './query-result';
export type {
  RegisterRequest,
  DeregisterRequest,
  ServiceRequest,
  ServiceProxyRequest,
  ServiceConnectRequest,
  CheckRequest,
  CheckDefinitionRequest,
} from './catalog/requests';
export type {
  NodeOut,
  NodeServiceOut,
  ServiceNodeOut,
  HealthCheckOut,
  CheckServiceNodeOut,
  CatalogNodeOut,
  CheckDefinitionOut,
  ProxyOut,
  ConnectOut,
  Weights,
} from './catalog/outputs';
export type { NodeMetaQuery, ServiceQuery } from './catalog/catalog-reads';
export type { HealthServiceQuery } from './catalog/health-reads';
export { ANY_STATE } from './catalog/health-reads';
export { dropNonPassing } from './catalog/passing-filter';
export { RESERVED_META_PREFIX, metaProblem } from './catalog/service-meta';
export { NODES, SERVICES, CHECKS, COORDINATES, nodeWatchKey, serviceWatchKey, connectWatchKey } from './catalog/keys';
export { estimatedRtt, type Coordinate } from './coordinates/vivaldi';
export { parseGoDuration, formatGoDuration, parseDurationMs, formatDurationMs } from './go-duration';
export { intentionPrecedence, compareEvaluationOrder, WILDCARD, type IntentionNames } from './intentions/precedence';
export { SOURCE_TYPE, DEFAULT_NAMESPACE, describeIntention, type IntentionInput, type IntentionOut } from './intentions/records';
export { normaliseIntention, intentionProblems, problemsMessage } from './intentions/validation';
export { INTENTIONS, sideMatches, type MatchSide } from './intentions/intention-table';
export type { MatchEntry } from './intentions/intention-reads';
export type { IntentionUpsertCommand, IntentionDeleteCommand } from './intentions/intention-commands';
export { CA_ROOTS, CA_CONFIG } from './ca/ca-table';
export type { CaSettings, CaConfigRecord, RootInput, StoredRoot, CaRootOut, CaRootsOut, CaConfigOut } from './ca/records';
export type { CaInitializeCommand, CaRotateCommand, CaSetConfigCommand, CaSerialsCommand, CaPruneCommand, SerialBlock } from './ca/ca-commands';
export { ACL_TOKENS, ACL_POLICIES } from './acl/keys';
export type { AclCommand, BootstrapResult, TokenFields, PolicyFields, NewTokenIdentity, LegacyAclFields, ReplicatedPolicy, ReplicatedToken, ReplicatedRows } from './acl/commands';
export type { TokenOut, TokenListEntry, PolicyOut, PolicyListEntry, PolicyLink, PolicyLinkInput, LegacyAclOut } from './acl/records';
export type { SessionRecord, SessionData, SessionBehavior } from './sessions/session-records';
export { MAX_LOCK_DELAY_NS, SESSIONS } from './sessions/session-records';
export type { KvEntry, KvEntryOut, KvInput } from './kv/kv-records';
export { kvEntryOut } from './kv/kv-records';
export { CATALOG_VERBS, type CatalogVerb } from './catalog-txn/staged-catalog';
export type { TxnOpInput, TxnOpResult, FullTxnReply } from './catalog-txn/txn-command';
export { asUint64, parseUint64, MAX_UINT64, type Uint64 } from './uint64';
export { KV_VERBS, KV_READ_VERBS, type KvOp, type KvVerb } from './kv/kv-ops';
export { MAX_TXN_OPS, type KvWriteVerb, type TxnReply, type TxnResult, type TxnError } from './kv/kv-commands';
export type { QueryDefinition, QueryRecord, QueryTemplate, ServiceQuery as PreparedServiceQuery, QueryFailover } from './queries/query-records';
export { isTemplate, QUERIES } from './queries/query-records';
export type { Resolution as QueryResolution } from './queries/query-reads';
export type { QuerySetResult } from './queries/query-commands';
export { AREAS, AREA_SERVERS, type AreaInput, type AreaOut, type AreaServer, type AreaServers } from './areas/area-records';
export type { AreaCreateCommand, AreaUpdateCommand, AreaDeleteCommand, AreaServersCommand, AreaUpdateResult } from './areas/area-commands';
export { EVENTS, EVENT_RING_SIZE, EVENT_VERSION, type EventInput, type EventOut } from './events/event-records';
export type { EventFireCommand } from './events/event-commands';
export { AUTOPILOT_CONFIG, DEFAULT_AUTOPILOT, type AutopilotSettings, type AutopilotRecord } from './autopilot/autopilot-records';
export type { AutopilotSetConfigCommand } from './autopilot/autopilot-commands';
export type { Settled, StepLane } from './catalog/listing-steps';
