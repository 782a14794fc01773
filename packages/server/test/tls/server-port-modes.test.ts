// The server port's two TLS modes (@registry/raft TcpTransport, as tls/tls-files.ts configures it):
// with a certificate but no verify_incoming_rpc it serves TLS and plain on one port, told apart by
// the first byte; with verify_incoming_rpc it is TLS-only. setDialTls() decides per address how a
// peer is dialled (area links and UseTLS), closing a link that was open the other way.
import { rmSync } from 'node:fs';
import { TcpTransport } from '@registry/raft';
import { loadAgentTls } from '../../src/tls/tls-files';
import { defaultTlsConfig } from '../../src/config/tls-config';
import { issue, makeCa, writePki } from './test-pki';

jest.setTimeout(30_000);

const ca = makeCa('registry test CA');
const files = writePki(ca, issue(ca, 'server.dc2.registry', ['server.dc2.registry']));
const open: TcpTransport[] = [];
afterAll(async () => {
  await Promise.all(open.map((t) => t.close()));
  rmSync(files.dir, { recursive: true, force: true });
});

async function transport(tls?: Parameters<typeof TcpTransport.listen>[0]['tls']): Promise<TcpTransport> {
  const t = await TcpTransport.listen({ host: '127.0.0.1', port: 0, tls, defaultTimeoutMs: 3000 });
  open.push(t);
  return t;
}

const pem = { caFile: files.caFile, certFile: files.certFile, keyFile: files.keyFile };

test('a certificate without verify_incoming_rpc: one port answers plain and TLS dialers', async () => {
  const tls = await loadAgentTls({ ...defaultTlsConfig(), ...pem }, 'dc2');
  expect(tls.rpc?.acceptPlain).toBe(true);
  expect(tls.rpc?.dial).toBeUndefined();
  const server = await transport(tls.rpc);
  server.handle('who', () => 'dc2');

  const plain = await transport();
  expect(await plain.call(server.address, 'who', null)).toBe('dc2');

  // A dialer that uses TLS for this address (what an area with UseTLS asks for), checking the name.
  const dialer = await transport();
  const strict = await loadAgentTls({ ...defaultTlsConfig(), ...pem, verifyOutgoing: true, verifyServerHostname: true }, 'dc1');
  dialer.setDialTls(server.address, strict.wanDial('dc2', true));
  expect(await dialer.call(server.address, 'who', null)).toBe('dc2');
  // Large frames cross the TLS path whole. A generous bound: 3 MiB each way through TLS in this
  // process took over the default 3 s once in CI, beside the heavy cluster tests.
  server.handle('echo', (b) => b);
  const big = Buffer.alloc(3 << 20, 7);
  expect(Buffer.from((await dialer.call(server.address, 'echo', big, 20_000)) as Uint8Array).equals(big)).toBe(true);

  // The same certificate is wrong for dc3: a link that expects server.dc3.registry is refused.
  const wrong = await transport();
  wrong.setDialTls(server.address, strict.wanDial('dc3', true));
  await expect(wrong.call(server.address, 'who', null)).rejects.toThrow();

  // Back to plain for that address: the TLS link is closed and a plain one works.
  wrong.setDialTls(server.address, null);
  expect(await wrong.call(server.address, 'who', null)).toBe('dc2');
});

test('verify_incoming_rpc: the port is TLS-only, plain dialers get no answer', async () => {
  const tls = await loadAgentTls({ ...defaultTlsConfig(), ...pem, verifyIncomingRpc: true, verifyOutgoing: true }, 'dc2');
  expect(tls.rpc?.acceptPlain).toBe(false);
  const server = await transport(tls.rpc);
  server.handle('who', () => 'dc2');
  const plain = await transport();
  await expect(plain.call(server.address, 'who', null, 1500)).rejects.toThrow();
  const peer = await transport(tls.rpc);
  expect(await peer.call(server.address, 'who', null)).toBe('dc2');
});

test('wanDial: plain without UseTLS unless this datacenter dials with TLS anyway', async () => {
  const relaxed = await loadAgentTls({ ...defaultTlsConfig(), ...pem }, 'dc1');
  expect(relaxed.wanDial('dc2', false)).toBeNull();
  expect(relaxed.wanDial('dc2', true)).not.toBeNull();
  expect(relaxed.wanDial('DC2', true)).toBe(relaxed.wanDial('dc2', true));
  const strict = await loadAgentTls({ ...defaultTlsConfig(), ...pem, verifyOutgoing: true }, 'dc1');
  expect(strict.wanDial('dc2', false)).not.toBeNull();
  const none = await loadAgentTls(defaultTlsConfig(), 'dc1');
  expect(none.rpc).toBeUndefined();
});
