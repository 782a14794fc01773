// Majority arithmetic and configuration encoding, the pieces commit and elections rest on.
import { applyConfChange, decodeConfiguration, encodeConfiguration } from '../../src/core/configuration';
import { quorumIndex, voteOutcome } from '../../src/core/quorum';
import { configOf } from './tiny-net';

describe('quorum arithmetic', () => {
  it('the commit point is the highest index held by a majority', () => {
    const match: Record<string, number> = { a: 9, b: 5, c: 7, d: 1, e: 5 };
    expect(quorumIndex(['a', 'b', 'c'], (id) => match[id])).toBe(7);
    expect(quorumIndex(['a', 'b', 'c', 'd'], (id) => match[id])).toBe(5);
    expect(quorumIndex(['a', 'b', 'c', 'd', 'e'], (id) => match[id])).toBe(5);
    expect(quorumIndex([], () => 100)).toBe(0);
  });

  it('the commit point is the majority-th highest index for any sizes and orders (a larger call first leaves nothing behind)', () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 20;
    for (let round = 0; round < 500; round++) {
      const n = 1 + (round % 7);
      const ids = Array.from({ length: n }, (_, i) => `v${i}`);
      const match = new Map(ids.map((id) => [id, next()]));
      const sorted = [...match.values()].sort((a, b) => b - a);
      expect(quorumIndex(ids, (id) => match.get(id)!)).toBe(sorted[Math.floor(n / 2)]);
    }
  });

  it('an election is won by a majority of grants and lost once a majority is out of reach', () => {
    const voters = ['a', 'b', 'c', 'd'];
    expect(voteOutcome(voters, new Map([['a', true], ['b', true]]))).toBe('pending');
    expect(voteOutcome(voters, new Map([['a', true], ['b', true], ['c', true]]))).toBe('won');
    expect(voteOutcome(voters, new Map([['a', true], ['b', false], ['c', false]]))).toBe('lost');
  });
});

describe('configurations', () => {
  it('round-trip through a Config entry', () => {
    const c = configOf('n1', 'n2');
    expect(decodeConfiguration(encodeConfiguration(c))).toEqual(c);
  });

  it('rejects data that is not a configuration', () => {
    expect(() => decodeConfiguration(new TextEncoder().encode('{"servers":[{"id":1}]}'))).toThrow(/malformed/);
  });

  it('adding a known server updates its address; removing an unknown one changes nothing', () => {
    const c = configOf('n1', 'n2');
    expect(applyConfChange(c, { type: 'add', server: { id: 'n2', address: 'new' } }).servers).toEqual([
      { id: 'n1', address: 'addr-n1' },
      { id: 'n2', address: 'new' },
    ]);
    expect(applyConfChange(c, { type: 'remove', server: { id: 'n9', address: '' } })).toEqual(c);
    expect(applyConfChange(c, { type: 'add', server: { id: 'n3', address: 'addr-n3' } })).toEqual(configOf('n1', 'n2', 'n3'));
  });
});
