// Reading config files: `-config-file` (JSON, or HCL when it ends in `.hcl`) and `-config-dir`
// (its `*.json` and `*.hcl` files in lexical order, as Consul), each checked against the config
// schema. Every problem of every file is collected so `registry validate` can print them all.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { configFileSchema } from './config-schema';
import { parseHclConfig } from './hcl-config';

type Json = Record<string, unknown>;

export interface ConfigSource {
  kind: 'file' | 'dir';
  path: string;
}

export interface ConfigFile {
  path: string;
  content: Json;
}

/** A configuration that cannot be used; `errors` holds one line per problem, each naming its file. */
export class ConfigError extends Error {
  constructor(readonly errors: string[]) {
    super(errors.join('\n'));
    this.name = 'ConfigError';
  }
}

/**
 * Compiled by the first config file checked (issue #30, memory at rest): an agent started from flags
 * alone (-dev) never needs the config schema's validator, a large generated function and an ajv
 * instance of its own.
 */
let fileValidator: ValidateFunction | undefined;
const validateFile = (): ValidateFunction => (fileValidator ??= new Ajv({ allErrors: true, strict: false }).compile(configFileSchema));

/** ajv's error → "acl.enabled must be boolean" / "invalid config key acl.enabeld" (Consul's wording). */
function describe(e: ErrorObject): string {
  const at = e.instancePath.slice(1).replace(/\//g, '.');
  if (e.keyword === 'additionalProperties') {
    const key = (e.params as { additionalProperty: string }).additionalProperty;
    return `invalid config key ${at ? `${at}.` : ''}${key}`;
  }
  if (e.keyword === 'type') return `${at || 'the file'} must be ${String((e.params as { type: string | string[] }).type).replace(',', ' or ')}`;
  return `${at || 'the file'} ${e.message ?? 'is invalid'}`;
}

/** The schema's verdict on one file's content: an empty list when it is well-formed. */
export function schemaErrors(content: unknown, path: string): string[] {
  const validate = validateFile();
  if (validate(content)) return [];
  return (validate.errors ?? []).map((e) => `${path}: ${describe(e)}`);
}

function parseFile(path: string): Json {
  const text = readFileSync(path, 'utf8');
  // An empty file means no settings (as Consul reads it), not a syntax error.
  if (text.trim() === '') return {};
  if (extname(path).toLowerCase() === '.hcl') return parseHclConfig(text);
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('the top level must be an object');
  return value as Json;
}

/** The files a source stands for, in load order. */
function filesOf(source: ConfigSource): string[] {
  if (source.kind === 'file') return [source.path];
  return readdirSync(source.path)
    .filter((name) => /\.(json|hcl)$/i.test(name))
    .sort()
    .map((name) => join(source.path, name))
    .filter((path) => statSync(path).isFile());
}

/** Read and schema-check every file of `sources`, in order; all errors are collected, none thrown. */
export function readConfigSources(sources: readonly ConfigSource[]): { files: ConfigFile[]; errors: string[] } {
  const files: ConfigFile[] = [];
  const errors: string[] = [];
  for (const source of sources) {
    let paths: string[];
    try {
      paths = filesOf(source);
    } catch (err) {
      errors.push(`cannot read config ${source.kind === 'dir' ? 'dir' : 'file'} ${source.path}: ${(err as Error).message}`);
      continue;
    }
    for (const path of paths) {
      let content: Json;
      try {
        content = parseFile(path);
      } catch (err) {
        errors.push(`cannot read config file ${path}: ${(err as Error).message}`);
        continue;
      }
      const problems = schemaErrors(content, path);
      if (problems.length > 0) errors.push(...problems);
      else files.push({ path, content });
    }
  }
  return { files, errors };
}

/** A path given to `registry validate`: a directory is a config dir, anything else a file. */
export function sourceOf(path: string): ConfigSource {
  let dir = false;
  try {
    dir = statSync(path).isDirectory();
  } catch {
    // A missing path is reported when it is read.
  }
  return { kind: dir ? 'dir' : 'file', path };
}
