import { CommandError, intentionPrecedence, Store, type Command, type IntentionInput } from '@registry/store';

const NOW = '2024-03-01T12:00:00Z';
const LATER = '2024-03-01T13:00:00Z';

class Intentions {
  readonly store = new Store();
  private next = 1;
  private ids = 0;

  apply(cmd: Command): unknown {
    return this.store.apply(this.next++, cmd);
  }

  create(i: IntentionInput, now = NOW): string | CommandError {
    const ID = i.ID ?? `00000000-0000-0000-0000-${String(++this.ids).padStart(12, '0')}`;
    return this.apply({ type: 'intention.upsert', op: 'create', intention: { ...i, ID }, now }) as string | CommandError;
  }
}

const allow = (SourceName: string, DestinationName: string, extra: IntentionInput = {}): IntentionInput => ({
  SourceName, DestinationName, SourceType: 'registry', Action: 'allow', ...extra,
});

describe('intention precedence (Consul table, every source × destination form)', () => {
  const forms = { exact: ['default', 'web'], nameWild: ['default', '*'], allWild: ['*', '*'] } as const;
  const table: [keyof typeof forms, keyof typeof forms, number][] = [
    ['exact', 'exact', 9], ['exact', 'nameWild', 6], ['exact', 'allWild', 3],
    ['nameWild', 'exact', 8], ['nameWild', 'nameWild', 5], ['nameWild', 'allWild', 2],
    ['allWild', 'exact', 7], ['allWild', 'nameWild', 4], ['allWild', 'allWild', 1],
  ];
  test.each(table)('source %s → destination %s has precedence %d', (src, dst, expected) => {
    const [SourceNS, SourceName] = forms[src];
    const [DestinationNS, DestinationName] = forms[dst];
    expect(intentionPrecedence({ SourceNS, SourceName, DestinationNS, DestinationName })).toBe(expected);
  });

  test('the table covers all nine combinations exactly once', () => {
    expect(new Set(table.map(([s, d]) => `${s}/${d}`)).size).toBe(9);
  });

  test('stored rows carry the computed precedence, whatever the client sent', () => {
    const t = new Intentions();
    const id = t.create({ ...allow('*', 'db'), Precedence: 1 } as IntentionInput) as string;
    expect(t.store.intentionGet(id).value?.Precedence).toBe(8);
  });
});

describe('intention.upsert', () => {
  test('create fills defaults: namespaces default, Meta {}, timestamps, indexes', () => {
    const t = new Intentions();
    const id = t.create(allow('web', 'db'));
    expect(typeof id).toBe('string');
    const got = t.store.intentionGet(id as string);
    expect(got.value).toEqual({
      ID: id, Description: '', SourceNS: 'default', SourceName: 'web', DestinationNS: 'default', DestinationName: 'db',
      SourceType: 'registry', Action: 'allow', DefaultAddr: '', DefaultPort: 0, Meta: {}, Precedence: 9,
      CreatedAt: NOW, UpdatedAt: NOW, CreateIndex: 1, ModifyIndex: 1,
    });
    expect(got.index).toBe(1);
  });

  test('SourceType defaults to registry when empty', () => {
    const t = new Intentions();
    const id = t.create({ SourceName: 'a', DestinationName: 'b', Action: 'deny' }) as string;
    expect(t.store.intentionGet(id).value?.SourceType).toBe('registry');
  });

  test('update keeps CreatedAt and CreateIndex, moves UpdatedAt and ModifyIndex', () => {
    const t = new Intentions();
    const id = t.create(allow('web', 'db')) as string;
    const r = t.apply({ type: 'intention.upsert', op: 'update', intention: { ...allow('web', 'db'), ID: id, Action: 'deny' }, now: LATER });
    expect(r).toBe(id);
    const got = t.store.intentionGet(id).value!;
    expect(got).toMatchObject({ Action: 'deny', CreatedAt: NOW, UpdatedAt: LATER, CreateIndex: 1, ModifyIndex: 2 });
  });

  test('update of an unknown ID is refused', () => {
    const t = new Intentions();
    const r = t.apply({ type: 'intention.upsert', op: 'update', intention: { ...allow('a', 'b'), ID: 'nope' }, now: NOW });
    expect(r).toEqual(new CommandError("Cannot modify non-existent intention: 'nope'"));
  });

  test.each([
    [{ SourceName: '', DestinationName: 'db', Action: 'allow' }, 'SourceName must be set'],
    [{ SourceName: 'web', DestinationName: '', Action: 'allow' }, 'DestinationName must be set'],
    [{ SourceName: 'we*', DestinationName: 'db', Action: 'allow' }, "SourceName: wildcard character '*' cannot be used with partial values"],
    [{ SourceName: 'web', DestinationName: '*db', Action: 'allow' }, "DestinationName: wildcard character '*' cannot be used with partial values"],
    [{ SourceNS: 'de*', SourceName: 'web', DestinationName: 'db', Action: 'allow' }, "SourceNS: wildcard character '*' cannot be used with partial values"],
    [{ SourceNS: '*', SourceName: 'web', DestinationName: 'db', Action: 'allow' }, 'SourceName: exact value cannot follow wildcard namespace'],
    [{ SourceName: 'web', DestinationNS: '*', DestinationName: 'db', Action: 'allow' }, 'DestinationName: exact value cannot follow wildcard namespace'],
    [{ SourceName: 'web', DestinationName: 'db', Action: 'ALLOW' }, "Action must be set to 'allow' or 'deny'"],
    [{ SourceName: 'web', DestinationName: 'db', Action: 'allow', SourceType: 'consul' }, "SourceType must be set to 'registry'"],
    [{ SourceName: 'web', DestinationName: 'db', Action: 'allow', Description: 'x'.repeat(513) }, 'Description exceeds maximum length 512'],
    [{ SourceName: 'web', DestinationName: 'db', Action: 'allow', Meta: { ['k'.repeat(129)]: 'v' } }, 'exceeds maximum length 128'],
    [{ SourceName: 'web', DestinationName: 'db', Action: 'allow', Meta: { k: 'v'.repeat(513) } }, 'Meta value for key "k" exceeds maximum length 512'],
    [{ SourceName: 'web', DestinationName: 'db', Action: 'allow', Meta: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) }, 'Meta exceeds maximum element count 64'],
  ] as [IntentionInput, string][])('refuses %j: %s', (input, message) => {
    const t = new Intentions();
    const r = t.create(input);
    expect(r).toBeInstanceOf(CommandError);
    expect((r as CommandError).message).toContain(message);
    expect(t.store.intentionList().value).toEqual([]);
  });

  test('several problems are reported together', () => {
    const t = new Intentions();
    const r = t.create({ SourceName: '', DestinationName: '', Action: 'maybe' }) as CommandError;
    expect(r.message).toMatch(/^3 errors occurred: SourceName must be set; DestinationName must be set; Action must be set/);
  });

  test('the four names must be unique, compared case-insensitively', () => {
    const t = new Intentions();
    const first = t.create(allow('web', 'db')) as string;
    const r = t.create({ ...allow('WEB', 'DB'), Action: 'deny' }) as CommandError;
    expect(r.message).toBe(`duplicate intention found: ALLOW default/web => default/db (ID: ${first}, Precedence: 9)`);
    // Another pair may be updated onto a free pair, but not onto a taken one.
    const second = t.create(allow('api', 'db')) as string;
    const moved = t.apply({ type: 'intention.upsert', op: 'update', intention: { ...allow('web', 'db'), ID: second }, now: NOW });
    expect(moved).toBeInstanceOf(CommandError);
    // Updating a row onto its own names is fine.
    expect(t.apply({ type: 'intention.upsert', op: 'update', intention: { ...allow('web', 'db'), ID: first }, now: NOW })).toBe(first);
  });
});

describe('intention.delete', () => {
  test('removes the row and bumps the table index; unknown IDs are refused', () => {
    const t = new Intentions();
    const id = t.create(allow('web', 'db')) as string;
    expect(t.apply({ type: 'intention.delete', id })).toBe(true);
    expect(t.store.intentionGet(id).value).toBeNull();
    expect(t.store.intentionList().index).toBe(2);
    expect(t.apply({ type: 'intention.delete', id })).toEqual(new CommandError(`Cannot modify non-existent intention: '${id}'`));
  });
});

describe('intention reads', () => {
  function populated(): Intentions {
    const t = new Intentions();
    t.create(allow('*', '*'));
    t.create({ ...allow('web', 'db'), Action: 'deny' });
    t.create(allow('*', 'db'));
    t.create(allow('web', '*'));
    t.create(allow('api', 'db'));
    t.create(allow('web', 'cache'));
    return t;
  }
  const pairs = (xs: { SourceName: string; DestinationName: string; Precedence: number }[]) => xs.map((x) => `${x.SourceName}>${x.DestinationName}:${x.Precedence}`);

  test('list is in evaluation order: precedence descending, then names ascending', () => {
    expect(pairs(populated().store.intentionList().value)).toEqual([
      'api>db:9', 'web>cache:9', 'web>db:9', '*>db:8', 'web>*:6', '*>*:5',
    ]);
  });

  test('match by destination returns exact, name-wildcard and full-wildcard rows, per entry', () => {
    const t = populated();
    const r = t.store.intentionMatch('destination', [{ name: 'db' }, { name: 'DB' }, { name: 'other' }]);
    expect(pairs(r.value[0]!)).toEqual(['api>db:9', 'web>db:9', '*>db:8', 'web>*:6', '*>*:5']);
    expect(pairs(r.value[1]!)).toEqual(pairs(r.value[0]!));
    expect(pairs(r.value[2]!)).toEqual(['web>*:6', '*>*:5']);
  });

  test('match by source', () => {
    const r = populated().store.intentionMatch('source', [{ name: 'web' }, { namespace: 'other', name: 'web' }]);
    expect(pairs(r.value[0]!)).toEqual(['web>cache:9', 'web>db:9', '*>db:8', 'web>*:6', '*>*:5']);
    expect(r.value[1]).toEqual([]);
  });

  test('snapshot and restore keep intentions and their order', () => {
    const t = populated();
    const copy = new Store();
    copy.restore(t.store.snapshot());
    expect(copy.intentionList()).toEqual(t.store.intentionList());
    expect(copy.checkInvariants()).toEqual([]);
  });

  test('a write to the table wakes a blocked intention reader', () => {
    const t = populated();
    const before = t.store.intentionMatch('destination', [{ name: 'db' }]);
    let woke = false;
    t.store.watch(before.keys, () => (woke = true));
    t.create(allow('x', 'y'));
    expect(woke).toBe(true);
    expect(t.store.intentionMatch('destination', [{ name: 'db' }]).index).toBeGreaterThan(before.index);
  });
});
