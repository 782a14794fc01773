// Request bodies of the network-area endpoints (spec "Network area").
import { Type, type Static } from '@sinclair/typebox';
import { Bool, NullableList, Obj, Str } from './body-fields';

export const areaSchema = Obj({ PeerDatacenter: Str(), RetryJoin: NullableList(Type.String()), UseTLS: Bool() });
export type AreaBody = Static<typeof areaSchema>;

export const areaUpdateSchema = Obj({ UseTLS: Bool() });
export type AreaUpdateBody = Static<typeof areaUpdateSchema>;

/** `PUT /v1/operator/area/:uuid/join`: a JSON array of addresses. */
export const areaJoinSchema = Type.Array(Type.String());
