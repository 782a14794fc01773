// The text format of data-driven test files (after cockroachdb/datadriven, which
// etcd-io/raft's interaction tests use), so that a regression case is a few lines:
//
//   # comments and blank lines between blocks are kept as they are
//   <command> <arg> <arg> ...
//   ----
//   <expected output, any number of lines, none of them blank>
//   <a blank line or the end of the file ends the block>
//
// A file is run top to bottom against one environment; the file is then rebuilt
// with the actual outputs, so a test compares whole files (jest shows a line diff)
// and REWRITE=1 only has to write the rebuilt text back.

export interface Command {
  /** 1-based line of the command in its file, for error messages. */
  line: number;
  name: string;
  args: string[];
}

interface Block {
  /** Comment and blank lines before the command, verbatim. */
  before: string[];
  raw: string;
  command: Command;
  expected: string[];
}

export interface ParsedFile {
  blocks: Block[];
  /** Comment and blank lines after the last block. */
  trailer: string[];
}

const SEPARATOR = '----';

export function parseDataFile(text: string, file = '<input>'): ParsedFile {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop(); // the final newline ends the last line
  const blocks: Block[] = [];
  let pending: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === '' || line.startsWith('#')) {
      pending.push(line);
      i++;
      continue;
    }
    const [name, ...args] = line.trim().split(/\s+/);
    const command: Command = { line: i + 1, name, args };
    if (lines[i + 1] !== SEPARATOR) throw new Error(`${file}:${i + 2}: expected '${SEPARATOR}' after '${line}'`);
    i += 2;
    const expected: string[] = [];
    while (i < lines.length && lines[i].trim() !== '') expected.push(lines[i++]);
    blocks.push({ before: pending, raw: line, command, expected });
    pending = [];
    // The blank line that ends a block belongs to it (it is written back after the output).
    if (i < lines.length) i++;
  }
  return { blocks, trailer: pending };
}

/**
 * Runs every command in order and returns the file rebuilt with the actual outputs.
 * `run` returns the output lines; an exception becomes an `error: ...` output, so a
 * case can also pin down a refusal.
 */
export function rebuildDataFile(parsed: ParsedFile, run: (command: Command) => string[]): string {
  const out: string[] = [];
  for (const block of parsed.blocks) {
    let actual: string[];
    try {
      actual = run(block.command);
    } catch (err) {
      actual = [`error: ${(err as Error).message}`];
    }
    for (const line of actual) {
      if (line.trim() === '') throw new Error(`line ${block.command.line}: '${block.raw}' printed a blank line, which would end its block`);
    }
    out.push(...block.before, block.raw, SEPARATOR, ...actual, '');
  }
  out.push(...parsed.trailer);
  // Exactly one newline at the end, however the trailer looked.
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out.join('\n') + '\n';
}
