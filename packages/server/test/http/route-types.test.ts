// Type-level check of schema-first routes: ctx.query and ctx.params are typed from the route's
// schemas (TypeBox's Static). This file is compiled by `tsc --noEmit -p tsconfig.jest.json` (part of
// `npm test`): if ctx.query lost its type (became `any` or the raw string map), the assignments
// below would stop compiling, or a `@ts-expect-error` would be unused — which is an error too.
import { Type } from '@sinclair/typebox';
import { route } from '../../src/http/route';
import { readQuery, writeQuery } from '../../src/schemas/query-options';
import { Flag, List, RequiredText, Text, Uint, Uint64Field } from '../../src/schemas/query-fields';
import type { Uint64 } from '@registry/store';

const kvGet = route({
  method: 'GET',
  path: '/v1/kv{/*key}',
  query: readQuery({ recurse: Flag(), separator: Text(), tag: List() }),
  params: Type.Object({ key: RequiredText('Missing key name') }),
  handle(ctx) {
    const recurse: boolean = ctx.query.recurse;
    const separator: string | undefined = ctx.query.separator;
    const tags: string[] | undefined = ctx.query.tag;
    // The shared options are part of every route's query type.
    const index: number | undefined = ctx.query.index;
    const stale: boolean = ctx.query.stale;
    const key: string = ctx.params.key;
    // @ts-expect-error a flag is a boolean, not a string
    const wrong: string = ctx.query.recurse;
    // @ts-expect-error a name the schema does not declare is not on the type
    void ctx.query.undeclared;
    // @ts-expect-error a param the schema does not declare is not on the type
    void ctx.params.other;
    return { recurse, separator, tags, index, stale, key, wrong };
  },
});

const kvPut = route({
  method: 'PUT',
  path: '/v1/kv{/*key}',
  query: writeQuery({ cas: Uint('bad cas'), flags: Uint64Field('bad flags') }),
  handle(ctx) {
    const cas: number | undefined = ctx.query.cas;
    const flags: Uint64 | undefined = ctx.query.flags;
    // @ts-expect-error a write's query type holds dc, token and pretty of the shared options, not index
    void ctx.query.index;
    // Without a params schema, params are the decoded strings.
    const key: string | undefined = ctx.params.key;
    return { cas, flags, key };
  },
});

const plain = route({
  method: 'GET',
  path: '/v1/plain',
  handle(ctx) {
    // Without a query schema, the names as they arrived.
    const raw: string | string[] | undefined = ctx.query.anything;
    // @ts-expect-error not a boolean
    const flag: boolean = ctx.query.anything;
    return { raw, flag };
  },
});

test('routes declared with schemas carry their compiled readers', () => {
  expect(typeof kvGet.readQuery).toBe('function');
  expect(typeof kvGet.readParams).toBe('function');
  expect(typeof kvPut.readQuery).toBe('function');
  expect(kvPut.readParams).toBeUndefined();
  expect(plain.readQuery).toBeUndefined();
  expect(kvGet.readQuery!({ recurse: '', tag: 'a' })).toMatchObject({ recurse: true, tag: ['a'], stale: false });
});
