// A prepared query as the store keeps it and as the API shows it (Consul's PreparedQuery), every
// field present with Go's zero values, so reads round-trip what was written.

export interface QueryTemplate {
  /** '' (not a template) or 'name_prefix_match'. */
  Type: string;
  Regexp: string;
  RemoveEmptyTags: boolean;
}

export interface QueryFailover {
  NearestN: number;
  Datacenters: string[] | null;
}

export interface ServiceQuery {
  Service: string;
  Failover: QueryFailover;
  OnlyPassing: boolean;
  IgnoreCheckIDs: string[] | null;
  Near: string;
  Tags: string[] | null;
  NodeMeta: Record<string, string> | null;
  ServiceMeta: Record<string, string> | null;
  /** Stored and shown (explain); no filtering semantics. */
  Meta: Record<string, string> | null;
  Connect: boolean;
}

export interface QueryDefinition {
  ID: string;
  Name: string;
  Session: string;
  Token: string;
  Template: QueryTemplate;
  Service: ServiceQuery;
  DNS: { TTL: string };
}

export interface QueryRecord extends QueryDefinition {
  CreateIndex: number;
  ModifyIndex: number;
}

export const QUERIES = 'queries';

export function isTemplate(q: Pick<QueryDefinition, 'Template'>): boolean {
  return q.Template.Type !== '';
}
