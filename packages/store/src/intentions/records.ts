// An intention as stored and as shown (Consul's structs.Intention, registry's SourceType).

export const SOURCE_TYPE = 'registry';
export const DEFAULT_NAMESPACE = 'default';

/** What a client may set; the server fills ID and timestamps before the command is proposed. */
export interface IntentionInput {
  ID?: string;
  Description?: string;
  SourceNS?: string;
  SourceName?: string;
  DestinationNS?: string;
  DestinationName?: string;
  SourceType?: string;
  Action?: string;
  DefaultAddr?: string;
  DefaultPort?: number;
  Meta?: Record<string, string> | null;
}

/** The JSON shape of an intention, in Consul's field order. Meta is `{}`, never null. */
export interface IntentionOut {
  ID: string;
  Description: string;
  SourceNS: string;
  SourceName: string;
  DestinationNS: string;
  DestinationName: string;
  SourceType: string;
  Action: 'allow' | 'deny';
  DefaultAddr: string;
  DefaultPort: number;
  Meta: Record<string, string>;
  Precedence: number;
  CreatedAt: string;
  UpdatedAt: string;
  CreateIndex: number;
  ModifyIndex: number;
}

/** Rows are replaced, never mutated, and copied on the way out. */
export type IntentionRecord = Readonly<IntentionOut>;

export function intentionOut(r: IntentionRecord): IntentionOut {
  return { ...r, Meta: { ...r.Meta } };
}

/** `ALLOW default/web => default/db (ID: …, Precedence: 9)`: how errors and reasons name an intention. */
export function describeIntention(r: IntentionRecord): string {
  return `${r.Action.toUpperCase()} ${r.SourceNS}/${r.SourceName} => ${r.DestinationNS}/${r.DestinationName} (ID: ${r.ID}, Precedence: ${r.Precedence})`;
}
