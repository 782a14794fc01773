import { formatGoDuration, parseGoDuration } from '@registry/store';

describe('Go durations', () => {
  test.each([
    ['10s', 10e9, '10s'],
    ['1m30s', 90e9, '1m30s'],
    ['1h', 3600e9, '1h0m0s'],
    ['1.5s', 1.5e9, '1.5s'],
    ['500ms', 500e6, '500ms'],
    ['1500us', 1.5e6, '1.5ms'],
    ['250ns', 250, '250ns'],
    ['2µs', 2000, '2µs'],
    ['-3s', -3e9, '-3s'],
    ['0', 0, '0s'],
    ['1h0m0.001s', 3600.001e9, '1h0m0.001s'],
  ])('%s is %d ns and prints as %s', (text, ns, printed) => {
    expect(parseGoDuration(text)).toBe(ns);
    expect(formatGoDuration(ns)).toBe(printed);
  });

  test.each(['', '10', 's', '1x', '1.s2', '--1s'])('%j is not a duration', (text) => {
    expect(parseGoDuration(text)).toBeUndefined();
  });
});
