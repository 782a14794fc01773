// `registry acl bootstrap|policy …|token …`.
import { Command } from 'commander';
import { attempt } from '../action';
import { clientOf, formatOption, withServerFlags } from '../http-flags';
import { printToken, type Token } from '../acl/acl-format';
import { aclPolicyCommand } from './acl-policy';
import { aclTokenCommand } from './acl-token';

export function aclCommand(): Command {
  const acl = new Command('acl').description('manage access control lists');
  const bootstrap = withServerFlags(new Command('bootstrap').description('create the initial management token')).addOption(formatOption());
  acl.addCommand(
    bootstrap.action(() =>
      attempt('Failed ACL bootstrapping', async () => {
        const o = bootstrap.opts();
        printToken(await clientOf(o).put<Token>('/v1/acl/bootstrap'), o);
      }),
    ),
  );
  acl.addCommand(aclPolicyCommand());
  acl.addCommand(aclTokenCommand());
  return acl;
}
