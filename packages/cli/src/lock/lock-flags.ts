// The lock command's flags that take a value, so that the child's words can be told from them.
// Its own module: the client program needs it to split `registry lock … CHILD…` before parsing,
// and must not load the lock command (and its child-process code) for every other command.
export const LOCK_VALUE_FLAGS = new Set(['http-addr', 'token', 'token-file', 'ca-file', 'ca-path', 'client-cert', 'client-key', 'tls-server-name', 'n', 'name', 'monitor-retry', 'timeout', 'try']);
