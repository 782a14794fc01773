// The body of POST /v1/query and PUT /v1/query/:id (spec "Prepared query"; consul-behaviour §4.1).
import { Type, type Static } from '@sinclair/typebox';
import { NullableList, NullableObj, Obj, OneOf, StrMap } from './body-fields';

const str = () => OneOf<string | null>('string', 'null');
const bool = () => OneOf<boolean | null>('boolean', 'null');
const strList = () => NullableList(Type.String());

export const querySchema = Obj({
  ID: str(),
  Name: str(),
  Session: str(),
  Token: str(),
  Template: NullableObj({ Type: str(), Regexp: str(), RemoveEmptyTags: bool() }),
  Service: NullableObj({
    Service: str(),
    Failover: NullableObj({ NearestN: OneOf<number | null>('integer', 'null'), Datacenters: strList() }),
    OnlyPassing: bool(),
    IgnoreCheckIDs: strList(),
    Near: str(),
    Tags: strList(),
    NodeMeta: StrMap(),
    ServiceMeta: StrMap(),
    Meta: StrMap(),
    Connect: bool(),
  }),
  DNS: NullableObj({ TTL: str() }),
});
export type QueryBody = Static<typeof querySchema>;
