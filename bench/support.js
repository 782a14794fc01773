// Small helpers every bench script shares.
'use strict';
const net = require('node:net');

/** A port the OS hands out on 127.0.0.1 (bound, then released for the server to take). */
const freePort = () =>
  new Promise((res, rej) => {
    const s = net.createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

module.exports = { freePort, sleep };
