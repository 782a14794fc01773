// Go durations for flags such as -timeout=30s: the store's parser (one Go-duration module in the
// tree), imported from its own file, which has no imports, so the CLI still loads no more than it needs.
import { parseDurationMs } from '@registry/store/dist/go-duration';

/** A commander argument parser for a Go duration flag. */
export const durationFlag = (name: string) => (v: string) => {
  const ms = parseDurationMs(v);
  if (ms === undefined) throw new Error(`invalid value "${v}" for flag -${name}: parse error`);
  return ms;
};
