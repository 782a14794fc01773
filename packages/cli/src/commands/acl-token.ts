// `registry acl token create|read|update|clone|delete|list` (Consul 1.4's command/acl/token).
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { formatOption, clientOf, withServerFlags } from '../http-flags';
import { out } from '../output';
import { printToken, printTokens, type Token } from '../acl/acl-format';
import { tokenId } from '../acl/acl-ids';

const collect = (v: string, prev: string[] = []) => [...prev, v];

function links(o: { policyId?: string[]; policyName?: string[] }): { ID?: string; Name?: string }[] {
  return [...(o.policyName ?? []).map((Name) => ({ Name })), ...(o.policyId ?? []).map((ID) => ({ ID }))];
}

export function aclTokenCommand(): Command {
  const token = new Command('token').description('manage ACL tokens');

  const create = withServerFlags(new Command('create').description('create a token'))
    .option('--description <text>', 'a description', '')
    .option('--policy-id <id>', 'a policy to link, by ID (repeatable)', collect)
    .option('--policy-name <name>', 'a policy to link, by name (repeatable)', collect)
    .option('--local', 'a token of this datacenter only')
    .option('--meta', 'show the token\'s hash and indexes')
    .addOption(formatOption());
  token.addCommand(
    create.action(() =>
      attempt('Failed to create new token', async () => {
        const o = create.opts();
        const body = { Description: o.description, Policies: links(o), Local: !!o.local };
        printToken(await clientOf(o).put<Token>('/v1/acl/token', body), o);
      }),
    ),
  );

  const read = withServerFlags(new Command('read').description('read a token'))
    .option('--id <id>', 'the token\'s AccessorID (a unique prefix will do)')
    .option('--self', 'read the token the request is made with')
    .option('--meta', 'show the token\'s hash and indexes')
    .addOption(formatOption());
  token.addCommand(
    read.action(() =>
      attempt('Error reading token', async () => {
        const o = read.opts();
        const client = clientOf(o);
        if (o.self) return printToken(await client.get<Token>('/v1/acl/token/self'), o);
        if (!o.id) throw usage('Must specify the -id parameter');
        printToken(await client.get<Token>(`/v1/acl/token/${await tokenId(client, o.id)}`), o);
      }),
    ),
  );

  const update = withServerFlags(new Command('update').description('update a token'))
    .option('--id <id>', 'the token\'s AccessorID (a unique prefix will do)')
    .option('--description <text>', 'the new description')
    .option('--policy-id <id>', 'a policy to link, by ID (repeatable)', collect)
    .option('--policy-name <name>', 'a policy to link, by name (repeatable)', collect)
    .option('--merge-policies', 'add the policies to the token\'s instead of replacing them')
    .option('--meta', 'show the token\'s hash and indexes')
    .addOption(formatOption());
  token.addCommand(
    update.action(() =>
      attempt('Failed to update token', async () => {
        const o = update.opts();
        if (!o.id) throw usage('Cannot update a token without specifying the -id parameter');
        const client = clientOf(o);
        const id = await tokenId(client, o.id);
        const t = await client.get<Token>(`/v1/acl/token/${id}`);
        let policies: { ID?: string; Name?: string }[] = links(o);
        if (o.mergePolicies) {
          const have = t.Policies ?? [];
          policies = [...have.map((p) => ({ ID: p.ID })), ...policies.filter((n) => !have.some((h) => h.ID === n.ID || h.Name === n.Name))];
        }
        const body = { AccessorID: id, Description: o.description ?? t.Description, Policies: policies, Local: t.Local };
        const updated = await client.put<Token>(`/v1/acl/token/${id}`, body);
        if (o.format !== 'json') out('Token updated successfully.');
        printToken(updated, o);
      }),
    ),
  );

  const clone = withServerFlags(new Command('clone').description('copy a token: same policies, new IDs'))
    .option('--id <id>', 'the token\'s AccessorID (a unique prefix will do)')
    .option('--description <text>', 'the new token\'s description')
    .addOption(formatOption());
  token.addCommand(
    clone.action(() =>
      attempt('Failed to clone token', async () => {
        const o = clone.opts();
        if (!o.id) throw usage('Cannot clone a token without specifying the -id parameter');
        const client = clientOf(o);
        const id = await tokenId(client, o.id);
        const t = await client.put<Token>(`/v1/acl/token/${id}/clone`, o.description !== undefined ? { Description: o.description } : {});
        if (o.format !== 'json') out('Token cloned successfully.');
        printToken(t, o);
      }),
    ),
  );

  const del = withServerFlags(new Command('delete').description('delete a token')).option('--id <id>', 'the token\'s AccessorID (a unique prefix will do)');
  token.addCommand(
    del.action(() =>
      attempt('Error deleting token', async () => {
        const o = del.opts();
        if (!o.id) throw usage('Must specify the -id parameter');
        const client = clientOf(o);
        const id = await tokenId(client, o.id);
        await client.delete(`/v1/acl/token/${id}`);
        out(`Token "${id}" deleted successfully`);
      }),
    ),
  );

  const list = withServerFlags(new Command('list').description('list the tokens'))
    .option('--meta', 'show each token\'s hash and indexes')
    .addOption(formatOption());
  token.addCommand(
    list.action(() =>
      attempt('Failed to retrieve the token list', async () => {
        const o = list.opts();
        printTokens(await clientOf(o).get<Token[]>('/v1/acl/tokens'), o);
      }),
    ),
  );
  return token;
}
