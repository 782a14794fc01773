// `registry acl policy create|read|update|delete|list` (Consul 1.4's command/acl/policy).
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { formatOption, clientOf, withServerFlags } from '../http-flags';
import { loadData } from '../input-data';
import { out } from '../output';
import { printPolicies, printPolicy, type Policy } from '../acl/acl-format';
import { policyId, policyIdByName } from '../acl/acl-ids';
import type { Client } from '../http-client';

const collect = (v: string, prev: string[] = []) => [...prev, v];

async function rulesOf(arg: string | undefined): Promise<string | undefined> {
  return arg === undefined ? undefined : (await loadData(arg)).toString('utf8');
}

async function idFrom(client: Client, o: { id?: string; name?: string }): Promise<string> {
  if (o.id) return policyId(client, o.id);
  if (o.name) return policyIdByName(client, o.name);
  throw usage('Must specify either the -id or -name parameters');
}

export function aclPolicyCommand(): Command {
  const policy = new Command('policy').description('manage ACL policies');

  const create = withServerFlags(new Command('create').description('create a policy'))
    .option('--name <name>', 'the policy\'s name')
    .option('--description <text>', 'a description', '')
    .option('--rules <rules>', 'the rules (HCL or JSON); @file reads a file, - reads stdin')
    .option('--valid-datacenter <dc>', 'a datacenter the policy applies in (repeatable)', collect)
    .option('--meta', 'show the policy\'s hash and indexes')
    .addOption(formatOption());
  policy.addCommand(
    create.action(() =>
      attempt('Failed to create new policy', async () => {
        const o = create.opts();
        if (!o.name) throw usage("Missing require '-name' flag");
        const body = { Name: o.name, Description: o.description, Rules: (await rulesOf(o.rules)) ?? '', Datacenters: o.validDatacenter };
        printPolicy(await clientOf(o).put<Policy>('/v1/acl/policy', body), o);
      }),
    ),
  );

  const read = withServerFlags(new Command('read').description('read a policy'))
    .option('--id <id>', 'the policy\'s ID (a unique prefix will do)')
    .option('--name <name>', 'the policy\'s name')
    .option('--meta', 'show the policy\'s hash and indexes')
    .addOption(formatOption());
  policy.addCommand(
    read.action(() =>
      attempt('Error reading policy', async () => {
        const o = read.opts();
        const client = clientOf(o);
        const id = await idFrom(client, o);
        printPolicy(await client.get<Policy>(`/v1/acl/policy/${id}`), o);
      }),
    ),
  );

  const update = withServerFlags(new Command('update').description('update a policy'))
    .option('--id <id>', 'the policy\'s ID (a unique prefix will do)')
    .option('--name <name>', 'the new name')
    .option('--description <text>', 'the new description')
    .option('--rules <rules>', 'the new rules; @file reads a file, - reads stdin')
    .option('--valid-datacenter <dc>', 'a datacenter the policy applies in (repeatable)', collect)
    .option('--merge-datacenters', 'add -valid-datacenter to the existing datacenters instead of replacing them')
    .option('--meta', 'show the policy\'s hash and indexes')
    .addOption(formatOption());
  policy.addCommand(
    update.action(() =>
      attempt('Error updating policy', async () => {
        const o = update.opts();
        if (!o.id) throw usage('Cannot update a policy without specifying the -id parameter');
        const client = clientOf(o);
        const id = await policyId(client, o.id);
        const p = await client.get<Policy>(`/v1/acl/policy/${id}`);
        const rules = await rulesOf(o.rules);
        let dcs = p.Datacenters ?? [];
        if (o.validDatacenter) dcs = o.mergeDatacenters ? [...new Set([...dcs, ...o.validDatacenter])] : o.validDatacenter;
        const body = { ID: id, Name: o.name ?? p.Name, Description: o.description ?? p.Description, Rules: rules ?? p.Rules, Datacenters: dcs };
        printPolicy(await client.put<Policy>(`/v1/acl/policy/${id}`, body), o);
      }),
    ),
  );

  const del = withServerFlags(new Command('delete').description('delete a policy'))
    .option('--id <id>', 'the policy\'s ID (a unique prefix will do)')
    .option('--name <name>', 'the policy\'s name');
  policy.addCommand(
    del.action(() =>
      attempt('Error deleting policy', async () => {
        const o = del.opts();
        const client = clientOf(o);
        const id = await idFrom(client, o);
        await client.delete(`/v1/acl/policy/${id}`);
        out(`Policy "${id}" deleted successfully`);
      }),
    ),
  );

  const list = withServerFlags(new Command('list').description('list the policies'))
    .option('--meta', 'show each policy\'s hash and indexes')
    .addOption(formatOption());
  policy.addCommand(
    list.action(() =>
      attempt('Failed to retrieve the policy list', async () => {
        const o = list.opts();
        printPolicies(await clientOf(o).get<Policy[]>('/v1/acl/policies'), o);
      }),
    ),
  );
  return policy;
}
