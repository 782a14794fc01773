// The bench's application: a TCP echo server on 127.0.0.1:<port> (its own process, so that its CPU
// is not the client's).
'use strict';
const net = require('node:net');
const port = Number(process.argv[2]);
net
  .createServer((s) => {
    s.setNoDelay(true);
    s.on('error', () => undefined);
    s.pipe(s);
  })
  .listen(port, '127.0.0.1', () => process.send?.('ready'));
