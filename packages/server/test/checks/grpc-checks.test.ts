// gRPC checks on an in-process dev agent against a real gRPC server in this process (grpc-js,
// serving grpc.health.v1.Health): SERVING is passing, NOT_SERVING and unknown services are
// critical, the service after "/" is the one asked about, TLS with GRPCUseTLS (a self-signed
// certificate: passing with TLSSkipVerify, critical without), and hostile targets stay critical.
import { Server, ServerCredentials, status as grpcStatus, type ServiceDefinition, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { decodeHealthRequest, encodeHealthResponse } from '../../src/checks/grpc-health-codec';
import { makeCa, issue } from '../tls/test-pki';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

jest.setTimeout(60_000);

/** What the health service answers, per service name ("" = the server as a whole). */
const serving = new Map<string, number>([['', 1]]);
const asked: string[] = [];

const healthService: ServiceDefinition = {
  Check: {
    path: '/grpc.health.v1.Health/Check',
    requestStream: false,
    responseStream: false,
    // An object, not the bare name: grpc-js takes a falsy request ("" for the whole server) for none.
    requestSerialize: (r: { service: string }) => Buffer.from(r.service),
    requestDeserialize: (b: Buffer) => ({ service: decodeHealthRequest(b) }),
    responseSerialize: (n: number) => encodeHealthResponse(n),
    responseDeserialize: (b: Buffer) => b.length,
  },
};

function check(call: ServerUnaryCall<{ service: string }, number>, cb: sendUnaryData<number>): void {
  asked.push(call.request.service);
  const s = serving.get(call.request.service);
  if (s === undefined) cb({ code: grpcStatus.NOT_FOUND, details: 'unknown service' });
  else cb(null, s);
}

async function startServer(creds: ServerCredentials): Promise<{ server: Server; port: number }> {
  const server = new Server();
  server.addService(healthService, { Check: check });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', creds, (err, p) => (err ? reject(err) : resolve(p))));
  return { server, port };
}

let a: TestAgent;
let plain: { server: Server; port: number };
let tls: { server: Server; port: number };

beforeAll(async () => {
  const ca = makeCa('grpc test ca');
  const leaf = issue(ca, 'grpc.test', ['grpc.test']);
  plain = await startServer(ServerCredentials.createInsecure());
  tls = await startServer(ServerCredentials.createSsl(null, [{ private_key: Buffer.from(leaf.keyPem), cert_chain: Buffer.from(leaf.certPem) }], false));
  a = await startDevAgent((c) => {
    c.checks.intervalMinMs = 20;
  });
});
afterAll(async () => {
  await a?.stop();
  plain?.server.forceShutdown();
  tls?.server.forceShutdown();
});

const put = (path: string, body?: unknown) => http(a.url, 'PUT', path, body);
const agentChecks = async () => (await http(a.url, 'GET', '/v1/agent/checks')).json as Record<string, any>;
const until = (cond: () => Promise<boolean>, ms = 15_000) => waitFor(cond, ms, 20);
const settled = async (id: string, status: string, output?: string | RegExp) => {
  await until(async () => {
    const c = (await agentChecks())[id];
    if (c?.Status !== status || c.Output === '') return false;
    return output === undefined || (typeof output === 'string' ? c.Output === output : output.test(c.Output));
  });
  return (await agentChecks())[id];
};

test('SERVING is passing, NOT_SERVING critical with Consul\'s words, and back', async () => {
  const target = `127.0.0.1:${plain.port}`;
  expect((await put('/v1/agent/check/register', { Name: 'grpc-main', GRPC: target, Interval: '50ms' })).status).toBe(200);
  const c = await settled('grpc-main', 'passing', `gRPC check ${target}: success`);
  expect(c.Type).toBeUndefined();
  expect(asked).toContain('');
  serving.set('', 2);
  await settled('grpc-main', 'critical', "gRPC application didn't report service healthy");
  serving.set('', 1);
  await settled('grpc-main', 'passing');
});

test('the service after "/" is the one asked about; an unknown one is critical with the server\'s reason', async () => {
  serving.set('billing.v1', 1);
  expect((await put('/v1/agent/check/register', { Name: 'grpc-billing', grpc: `127.0.0.1:${plain.port}/billing.v1`, interval: '50ms' })).status).toBe(200);
  await settled('grpc-billing', 'passing');
  expect(asked).toContain('billing.v1');
  expect((await put('/v1/agent/check/register', { Name: 'grpc-other', GRPC: `127.0.0.1:${plain.port}/other`, Interval: '50ms' })).status).toBe(200);
  await settled('grpc-other', 'critical', 'rpc error: code = NotFound desc = unknown service');
});

test('GRPCUseTLS: passing with TLSSkipVerify, critical when the self-signed certificate is verified', async () => {
  const target = `127.0.0.1:${tls.port}`;
  expect((await put('/v1/agent/check/register', { Name: 'grpc-tls', GRPC: target, GRPCUseTLS: true, TLSSkipVerify: true, Interval: '50ms' })).status).toBe(200);
  await settled('grpc-tls', 'passing', `gRPC check ${target}: success`);
  expect((await put('/v1/agent/check/register', { Name: 'grpc-tls-verify', GRPC: target, grpc_use_tls: true, Interval: '50ms' })).status).toBe(200);
  await settled('grpc-tls-verify', 'critical', /^rpc error: code = Unavailable desc = /);
  // Plain text to a TLS server fails too.
  expect((await put('/v1/agent/check/register', { Name: 'grpc-tls-plain', GRPC: target, Interval: '50ms', Timeout: '500ms' })).status).toBe(200);
  await settled('grpc-tls-plain', 'critical', /^rpc error: code = /);
});

test('inside a service definition', async () => {
  expect((await put('/v1/agent/service/register', { Name: 'rpc-api', Port: plain.port, Check: { GRPC: `127.0.0.1:${plain.port}`, Interval: '50ms' } })).status).toBe(200);
  expect((await settled('service:rpc-api', 'passing')).ServiceName).toBe('rpc-api');
});

test.each([
  ['unreachable', '127.0.0.1:1'],
  ['no port', '127.0.0.1'],
  ['empty server', '/svc'],
  ['garbage', '::::::%%%/x'],
  ['bad scheme', 'unknown-scheme:///x'],
  ['huge port', '127.0.0.1:999999'],
])('a hostile target (%s) is critical and the agent goes on', async (name, target) => {
  const id = `grpc-hostile-${name.replace(/ /g, '-')}`;
  expect((await put('/v1/agent/check/register', { Name: id, GRPC: target, Interval: '50ms', Timeout: '1s' })).status).toBe(200);
  const c = await settled(id, 'critical');
  expect(c.Output.length).toBeGreaterThan(0);
  expect((await http(a.url, 'GET', '/v1/agent/self')).status).toBe(200);
});
