// Services and checks defined in a config file, as Consul allows: `service` (one) or `services`
// (a list), `check` or `checks`, with the same fields and key spellings as the HTTP API. They are
// validated when the config is read, so a bad definition stops the agent from starting.
import { servicesFromDefinition, type ServiceDefinition } from './local-services';
import { RegistryError } from '../errors';
import type { AgentCheckDefinition } from '../schemas/agent-check';
import { checkRegisterSchema } from '../schemas/agent-check';
import { agentServiceSchema } from '../schemas/agent-service';
import { compileBody } from '../schemas/validator';
import { standaloneCheckSpec } from '../checks/check-spec';

export interface AgentDefinitions {
  services: ServiceDefinition[];
  checks: AgentCheckDefinition[];
}

const serviceBody = compileBody(agentServiceSchema, 'invalid service definition');
const checkBody = compileBody(checkRegisterSchema, 'invalid check definition');

function listOf(file: Record<string, unknown>, one: string, many: string, source: string): unknown[] {
  const out: unknown[] = [];
  if (file[one] !== undefined) out.push(file[one]);
  if (file[many] !== undefined) {
    if (!Array.isArray(file[many])) throw new Error(`${source}: ${many} must be an array`);
    out.push(...(file[many] as unknown[]));
  }
  return out;
}

function valid<T>(what: string, run: () => T): T {
  try {
    return run();
  } catch (err) {
    throw new Error(`${what}: ${err instanceof RegistryError ? err.message : (err as Error).message}`);
  }
}

/** A service definition as the HTTP API would take it (throws RegistryError 400 with the reason). */
export function validServiceDefinition(raw: unknown): ServiceDefinition {
  const def = serviceBody(raw);
  // Managed proxies are judged at registration, against connect.proxy.allow_managed_api_registration.
  servicesFromDefinition(def, new Map(), { allowManagedApiRegistration: true });
  return def;
}

/** A check definition as PUT /v1/agent/check/register would take it (throws RegistryError 400). */
export function validCheckDefinition(raw: unknown): AgentCheckDefinition {
  const def = checkBody(raw);
  standaloneCheckSpec(def);
  return def;
}

export function agentDefinitionsOf(file: Record<string, unknown>, source: string): AgentDefinitions {
  const services = listOf(file, 'service', 'services', source).map((raw, i) => valid(`${source}: services[${i}]`, () => validServiceDefinition(raw)));
  const checks = listOf(file, 'check', 'checks', source).map((raw, i) => valid(`${source}: checks[${i}]`, () => validCheckDefinition(raw)));
  return { services, checks };
}
