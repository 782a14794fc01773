import { X509Certificate } from 'node:crypto';
import { connect, createServer, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { crossSign, generateRoot, signLeafForService, type RootCA } from '@registry/ca';

const CLUSTER = '11111111-2222-3333-4444-555555555555';
const NOW = new Date('2024-03-01T12:00:00Z');

let oldRoot: RootCA;
let newRoot: RootCA;
let crossPEM: string;
beforeAll(() => {
  oldRoot = generateRoot({ clusterId: CLUSTER, keyType: 'rsa', serial: 1 });
  newRoot = generateRoot({ clusterId: CLUSTER, keyType: 'ec', serial: 2 });
  crossPEM = crossSign({ oldRoot, newRoot, serial: 3 });
});

const x509 = (pem: string) => new X509Certificate(pem);

describe('cross-signing the new root with the old one', () => {
  test('the cross-signed certificate verifies with the OLD root\'s public key and names it as issuer', () => {
    expect(x509(crossPEM).verify(x509(oldRoot.RootCert).publicKey)).toBe(true);
    expect(x509(crossPEM).checkIssued(x509(oldRoot.RootCert))).toBe(true);
    expect(x509(crossPEM).verify(x509(newRoot.RootCert).publicKey)).toBe(false);
  });

  test('it certifies the NEW root\'s subject and key as a CA', () => {
    const cross = x509(crossPEM);
    expect(cross.subject).toBe(x509(newRoot.RootCert).subject);
    expect(cross.issuer).toBe(x509(oldRoot.RootCert).subject);
    expect(cross.ca).toBe(true);
    expect(cross.publicKey.export({ type: 'spki', format: 'der' }))
      .toEqual(x509(newRoot.RootCert).publicKey.export({ type: 'spki', format: 'der' }));
    expect(cross.subjectAltName).toBe(`URI:spiffe://${CLUSTER}.registry`);
    expect(cross.serialNumber).toBe('03');
  });

  test('a leaf signed by the new root verifies against the cross-signed certificate', () => {
    const leaf = x509(signLeafForService({ root: newRoot, service: 'web', dc: 'dc1', serial: 4 }).CertPEM);
    expect(leaf.verify(x509(crossPEM).publicKey)).toBe(true);
    expect(leaf.checkIssued(x509(crossPEM))).toBe(true);
  });

  test('is valid from a minute ago for a week by default', () => {
    const cross = x509(crossSign({ oldRoot, newRoot, serial: 5, now: NOW }));
    expect(new Date(cross.validFrom).toISOString()).toBe('2024-03-01T11:59:00.000Z');
    expect(new Date(cross.validTo).toISOString()).toBe('2024-03-08T11:59:00.000Z');
  });

  test('with the cross-signed cert in IntermediateCerts, issued leaves carry it after the leaf', () => {
    const rotated = { ...newRoot, IntermediateCerts: [crossPEM] };
    const leaf = signLeafForService({ root: rotated, service: 'web', dc: 'dc1', serial: 6 });
    const blocks = leaf.CertPEM.match(/-----BEGIN CERTIFICATE-----/g) ?? [];
    expect(blocks).toHaveLength(2);
    expect(x509(leaf.CertPEM).subject).toBe('CN=web');
    expect(leaf.CertPEM.endsWith(crossPEM)).toBe(true);
  });
});

describe('TLS between services across a rotation', () => {
  /** One TLS round trip on 127.0.0.1; resolves with whether the client accepted the server's chain. */
  async function handshake(server: { cert: string; key: string }, clientCA: string[]): Promise<boolean> {
    const srv = createServer({ cert: server.cert, key: server.key }, (socket) => socket.end('ok'));
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const { port } = srv.address() as AddressInfo;
    try {
      return await new Promise<boolean>((resolve) => {
        const socket: TLSSocket = connect({
          host: '127.0.0.1', port, ca: clientCA,
          // SPIFFE identities are URIs, not host names: identity is checked by intentions, not here.
          checkServerIdentity: () => undefined,
        }, () => { socket.end(); resolve(true); });
        socket.on('error', () => resolve(false));
        socket.setTimeout(5000, () => { socket.destroy(); resolve(false); });
      });
    } finally {
      await new Promise((resolve) => srv.close(resolve));
    }
  }

  test('a client trusting only the old root accepts a new-root leaf sent with the cross-signed cert', async () => {
    const leaf = signLeafForService({ root: { ...newRoot, IntermediateCerts: [crossPEM] }, service: 'db', dc: 'dc1', serial: 7 });
    expect(await handshake({ cert: leaf.CertPEM, key: leaf.PrivateKeyPEM }, [oldRoot.RootCert])).toBe(true);
  });

  test('without the cross-signed cert that same client refuses the new-root leaf', async () => {
    const leaf = signLeafForService({ root: newRoot, service: 'db', dc: 'dc1', serial: 8 });
    expect(await handshake({ cert: leaf.CertPEM, key: leaf.PrivateKeyPEM }, [oldRoot.RootCert])).toBe(false);
    expect(await handshake({ cert: leaf.CertPEM, key: leaf.PrivateKeyPEM }, [newRoot.RootCert])).toBe(true);
  });
});
