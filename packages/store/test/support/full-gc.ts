// V8's gc() without --expose-gc on the command line: the flag only installs the function in contexts
// made while it is set, so one throwaway context is made with it on.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
