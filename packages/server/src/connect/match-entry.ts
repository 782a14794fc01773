// `name` / `source` / `destination` parameters of the intention endpoints: `ns/name` or a plain name
// in the default namespace (Consul's parseIntentionMatchEntry).
import { DEFAULT_NAMESPACE } from '@registry/store';
import { badRequest } from '../errors';
import type { ServiceName } from './intention-decision';

export function parseMatchEntry(input: string): ServiceName {
  const parts = input.split('/');
  if (parts.length > 2) throw badRequest(`name ${JSON.stringify(input)} is invalid: input can contain at most one '/'`);
  if (parts.length === 2) return { namespace: parts[0]!, name: parts[1]! };
  return { namespace: DEFAULT_NAMESPACE, name: input };
}
