// CA reads (consul-behaviour §7.2, §7.4): roots need no ACL; the configuration needs operator:read.
import { forbidden, serverError } from '../errors';
import { read, type ReadEndpoint } from './read-context';

export const connectReads = {
  'connect.roots': read({
    run: ({ store }) => store.caRoots(),
  }),
  'connect.ca-config': read({
    run: ({ store, authz }) => {
      if (!authz.operatorRead()) throw forbidden();
      const r = store.caConfig();
      if (!r.value) throw serverError('CA has not finished initializing');
      return r;
    },
  }),
} satisfies Record<string, ReadEndpoint>;
