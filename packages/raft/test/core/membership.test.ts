// Single-server membership changes (Raft thesis §4.1).
import { EntryType } from '../../src/core/types';
import { encodeConfiguration } from '../../src/core/configuration';
import { ELECTION, TinyNet, configOf, data, newCore } from './tiny-net';

const server = (id: string) => ({ id, address: `addr-${id}` });

describe('§4.1 membership changes', () => {
  it('adds a server: the configuration takes effect on append, the new server catches up and votes', () => {
    const net = TinyNet.bootstrapped(4, {}, 3);
    net.elect('n1');
    net.core('n1').propose([data('before')]);
    net.settle();
    const change = net.core('n1').proposeConfChange({ type: 'add', server: server('n4') });
    expect(change).toEqual({ index: 4, term: 2 });
    expect(net.core('n1').configuration).toEqual(configOf('n1', 'n2', 'n3', 'n4')); // before commit
    net.settle();
    expect(net.core('n4').configuration).toEqual(configOf('n1', 'n2', 'n3', 'n4'));
    expect(net.core('n4').lastIndex).toBe(4);
    expect(net.node('n4').committed.map((e) => e.type)).toEqual([EntryType.Config, EntryType.Noop, EntryType.Normal, EntryType.Config]);
  });

  it('allows one change at a time: a second is refused until the first commits', () => {
    const net = TinyNet.bootstrapped(5, {}, 3);
    net.elect('n1');
    expect(net.core('n1').proposeConfChange({ type: 'add', server: server('n4') })).not.toBeNull();
    expect(net.core('n1').proposeConfChange({ type: 'add', server: server('n5') })).toBeNull();
    net.settle();
    expect(net.core('n1').proposeConfChange({ type: 'add', server: server('n5') })).not.toBeNull();
  });

  it('uses the new configuration for quorums: with n4 added but down, three of four must hold an entry', () => {
    const net = TinyNet.bootstrapped(4, {}, 3);
    net.elect('n1');
    net.isolate('n4');
    net.core('n1').proposeConfChange({ type: 'add', server: server('n4') });
    net.settle();
    expect(net.core('n1').commitIndex).toBe(3);
    net.isolate('n3', 'n4');
    net.core('n1').propose([data('x')]);
    net.settle();
    expect(net.core('n1').commitIndex).toBe(3); // n1 + n2 are not a majority of four
  });

  it('a removed leader keeps leading until its removal commits, then steps down and hands over', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.core('n1').proposeConfChange({ type: 'remove', server: server('n1') });
    net.settle();
    expect(net.core('n1').role).toBe('follower');
    expect(['n2', 'n3'].filter((id) => net.core(id).role === 'leader')).toHaveLength(1);
    net.tick(5 * ELECTION, ['n1']);
    expect(net.core('n1').role).toBe('follower'); // not a member: never campaigns
  });

  it('a Config entry that is truncated takes its configuration with it', () => {
    const entry = (index: number, term: number, type: EntryType, payload: Uint8Array) => ({ index, term, type, data: payload });
    const follower = newCore('n2', {}, {
      hardState: { term: 2, vote: null, commit: 1 },
      entries: [
        entry(1, 1, EntryType.Config, encodeConfiguration(configOf('n1', 'n2', 'n3'))),
        entry(2, 2, EntryType.Config, encodeConfiguration(configOf('n1', 'n2', 'n3', 'n4'))),
      ],
    });
    expect(follower.configuration).toEqual(configOf('n1', 'n2', 'n3', 'n4'));
    follower.step({ type: 'append', from: 'n3', to: 'n2', term: 3, prevIndex: 1, prevTerm: 1, commit: 1, entries: [entry(2, 3, EntryType.Noop, new Uint8Array())] });
    expect(follower.configuration).toEqual(configOf('n1', 'n2', 'n3'));
  });

  it('refuses a change that would leave no voter', () => {
    const net = TinyNet.bootstrapped(1);
    net.tick(ELECTION);
    expect(net.core('n1').proposeConfChange({ type: 'remove', server: server('n1') })).toBeNull();
  });
});
