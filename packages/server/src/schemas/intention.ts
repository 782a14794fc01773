// Request body of intention create/update (spec "Intention"; consul-behaviour §6). Server-set
// fields (Precedence, CreatedAt, indexes) are dropped if a client sends them.
import type { Static } from '@sinclair/typebox';
import { Int, Obj, Str, StrMap } from './body-fields';

export const intentionSchema = Obj(
  {
    ID: Str(),
    Description: Str(),
    SourceNS: Str(),
    SourceName: Str(),
    DestinationNS: Str(),
    DestinationName: Str(),
    SourceType: Str(),
    Action: Str(),
    DefaultAddr: Str(),
    DefaultPort: Int(),
    Meta: StrMap(),
  },
  { additionalProperties: false },
);
export type IntentionBody = Static<typeof intentionSchema>;
