// The bench's floor for two proxies: a plain TCP relay (no TLS, no authorize, no bookkeeping) from
// 127.0.0.1:<listen> to 127.0.0.1:<target>, its own process. Two of them in a row have the proxied
// path's processes and socket hops, so proxied / relayed is what the proxies' own work costs.
'use strict';
const net = require('node:net');
const [listen, target] = process.argv.slice(2).map(Number);
net
  .createServer((a) => {
    a.setNoDelay(true);
    const b = net.connect({ host: '127.0.0.1', port: target });
    b.setNoDelay(true);
    const both = () => {
      a.destroy();
      b.destroy();
    };
    a.on('error', both);
    b.on('error', both);
    a.on('close', both);
    b.on('close', both);
    a.pipe(b);
    b.pipe(a);
  })
  .listen(listen, '127.0.0.1', () => process.send?.('ready'));
