// `PUT /v1/coordinate/update` (Consul's CoordinateUpdateRequest).
import { Type, type Static } from '@sinclair/typebox';
import { NullableObj, Num, Obj, Opt, Str } from './body-fields';

export const coordinateUpdateSchema = Obj({
  Node: Str(),
  Segment: Str(),
  Coord: NullableObj({ Vec: Opt(Type.Array(Type.Number())), Error: Num(), Adjustment: Num(), Height: Num() }),
});
export type CoordinateBody = Static<typeof coordinateUpdateSchema>;
