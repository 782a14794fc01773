// Consul 1.4's printing of ACL tokens and policies (command/acl/acl_helpers.go), or JSON with
// -format=json.
import { out, printJson } from '../output';

export interface PolicyLink {
  ID: string;
  Name: string;
}

export interface Token {
  AccessorID: string;
  SecretID?: string;
  Description: string;
  Policies?: PolicyLink[] | null;
  Local: boolean;
  CreateTime: string;
  Hash?: string;
  CreateIndex?: number;
  ModifyIndex?: number;
}

export interface Policy {
  ID: string;
  Name: string;
  Description: string;
  Rules?: string;
  Datacenters?: string[] | null;
  Hash?: string;
  CreateIndex?: number;
  ModifyIndex?: number;
}

export interface Shown {
  format?: string;
  meta?: boolean;
}

const hashHex = (h?: string) => (h ? Buffer.from(h, 'base64').toString('hex') : '');

export function printToken(t: Token, how: Shown): void {
  if (how.format === 'json') return printJson(t);
  out(`AccessorID:   ${t.AccessorID}`);
  if (t.SecretID !== undefined) out(`SecretID:     ${t.SecretID}`);
  out(`Description:  ${t.Description}`);
  out(`Local:        ${t.Local}`);
  out(`Create Time:  ${t.CreateTime}`);
  if (how.meta) {
    out(`Hash:         ${hashHex(t.Hash)}`);
    out(`Create Index: ${t.CreateIndex}`);
    out(`Modify Index: ${t.ModifyIndex}`);
  }
  out('Policies:');
  for (const p of t.Policies ?? []) out(`   ${p.ID} - ${p.Name}`);
}

export function printTokens(list: Token[], how: Shown): void {
  if (how.format === 'json') return printJson(list);
  list.forEach((t, i) => {
    if (i > 0) out('');
    printToken(t, how);
  });
}

export function printPolicy(p: Policy, how: Shown): void {
  if (how.format === 'json') return printJson(p);
  out(`ID:           ${p.ID}`);
  out(`Name:         ${p.Name}`);
  out(`Description:  ${p.Description}`);
  out(`Datacenters:  ${(p.Datacenters ?? []).join(', ')}`);
  if (how.meta) {
    out(`Hash:         ${hashHex(p.Hash)}`);
    out(`Create Index: ${p.CreateIndex}`);
    out(`Modify Index: ${p.ModifyIndex}`);
  }
  out('Rules:');
  out(p.Rules ?? '');
}

export function printPolicies(list: Policy[], how: Shown): void {
  if (how.format === 'json') return printJson(list);
  for (const p of list) {
    out(`${p.Name}:`);
    out(`   ID:           ${p.ID}`);
    out(`   Description:  ${p.Description}`);
    out(`   Datacenters:  ${(p.Datacenters ?? []).join(', ')}`);
    if (how.meta) {
      out(`   Hash:         ${hashHex(p.Hash)}`);
      out(`   Create Index: ${p.CreateIndex}`);
      out(`   Modify Index: ${p.ModifyIndex}`);
    }
  }
}
