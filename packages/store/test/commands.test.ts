import { CommandError, decodeCommand, encodeCommand, Store, type Command } from '@registry/store';

describe('command encoding', () => {
  test('commands survive an encode/decode round trip', () => {
    const cmds: Command[] = [
      { type: 'catalog.register', req: { Node: 'n1', Address: '1', NodeMeta: { a: 'b' }, Service: { Service: 'web', Tags: ['x'], Port: 80 }, Checks: [{ Name: 'c' }] } },
      { type: 'catalog.deregister', req: { Node: 'n1', ServiceID: 'web' } },
      { type: 'coordinate.update', updates: [{ Node: 'n1', Coord: { Vec: [0.5, -1], Error: 1.5, Adjustment: 0.1, Height: 1e-5 } }] },
    ];
    for (const c of cmds) expect(decodeCommand(encodeCommand(c))).toEqual(c);
  });

  test('decoding bytes that are not a command throws', () => {
    expect(() => decodeCommand(encodeCommand(42 as never))).toThrow(/not a state machine command/);
  });
});

describe('apply never throws for bad input', () => {
  test.each([
    ['an unknown type', { type: 'nope' }],
    ['no command at all', null],
    ['a register without a request', { type: 'catalog.register' }],
    ['a register whose request is a string', { type: 'catalog.register', req: 'n1' }],
    ['a wrongly typed Checks list', { type: 'catalog.register', req: { Node: 'n', Address: 'a', Checks: 'c' } }],
    ['a check that is a number', { type: 'catalog.register', req: { Node: 'n', Address: 'a', Checks: [7] } }],
    ['a bad duration', { type: 'catalog.register', req: { Node: 'n', Address: 'a', Check: { Name: 'c', Definition: { Interval: 'soon' } } } }],
    ['bad header values', { type: 'catalog.register', req: { Node: 'n', Address: 'a', Check: { Name: 'c', Definition: { Header: { A: 'x' } } } } }],
    ['node meta with a number', { type: 'catalog.register', req: { Node: 'n', Address: 'a', NodeMeta: { k: 1 } } }],
    ['coordinate updates that are not a list', { type: 'coordinate.update', updates: {} }],
    ['a coordinate update without node', { type: 'coordinate.update', updates: [{ Coord: { Vec: [0], Error: 0, Adjustment: 0, Height: 0 } }] }],
  ])('%s gives a CommandError and no change', (_what, cmd) => {
    const store = new Store();
    const result = store.apply(1, cmd as never);
    expect(result).toBeInstanceOf(CommandError);
    expect(store.catalogNodes({}).value).toEqual([]);
    expect(store.checkInvariants()).toEqual([]);
  });
});
