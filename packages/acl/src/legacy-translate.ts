/**
 * Legacy rule text → 1.4 rule text (Consul's acl.TranslateLegacyRules, served by
 * `/v1/acl/rules/translate`): every legacy block is a prefix rule, so `key "a"` becomes
 * `key_prefix "a"` (likewise agent, node, query, service, session, event), and the result is
 * printed the way hashicorp/hcl v1's printer prints it (two-space indents, comments kept, adjacent
 * one-line assignments aligned), since clients compare the text.
 *
 * This is a port of the parts of hcl v1's scanner, parser (with its lead/line comment rules) and
 * printer that rule text uses. js-hcl-parser cannot do it: it decodes to JSON and drops comments.
 *
 * Why ~670 lines in one file: the scanner, the parser and the printer share one token and comment
 * model (lead and line comments travel from the scanner to the printer); split, each would export
 * its internals to the next.
 */

export class TranslateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TranslateError';
  }
}

const RENAMED: ReadonlyMap<string, string> = new Map([
  ['agent', 'agent_prefix'],
  ['key', 'key_prefix'],
  ['node', 'node_prefix'],
  ['query', 'query_prefix'],
  ['service', 'service_prefix'],
  ['session', 'session_prefix'],
  ['event', 'event_prefix'],
]);

// ---- scanner ----

type TokType = 'IDENT' | 'STRING' | 'NUMBER' | 'FLOAT' | 'BOOL' | 'HEREDOC' | 'COMMENT' | 'LBRACE' | 'RBRACE' | 'LBRACK' | 'RBRACK' | 'ASSIGN' | 'COMMA' | 'EOF';

interface Pos {
  offset: number;
  line: number;
  column: number;
}

interface Tok {
  type: TokType;
  text: string;
  pos: Pos;
}

const INVALID: Pos = { offset: -1, line: 0, column: 0 };
const INFINITY: Pos = { offset: 1 << 30, line: 1 << 30, column: 0 };
const after = (a: Pos, b: Pos) => a.offset > b.offset || a.line > b.line;
const before = (a: Pos, b: Pos) => a.offset < b.offset || a.line < b.line;
const at = (p: Pos) => `At ${p.line}:${p.column}`;

function isLetter(c: string): boolean {
  return /[A-Za-z_]/.test(c) || c > '\x7f';
}
const isDigit = (c: string) => c >= '0' && c <= '9';

function scanAll(src: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  let line = 1;
  let col = 1;
  const advance = (n: number) => {
    for (let k = 0; k < n; k++) {
      if (src[i] === '\n') {
        line++;
        col = 1;
      } else col++;
      i++;
    }
  };
  while (true) {
    while (i < src.length && /[ \t\r\n]/.test(src[i] as string)) advance(1);
    const pos = { offset: i, line, column: col };
    if (i >= src.length) {
      toks.push({ type: 'EOF', text: '', pos });
      return toks;
    }
    const c = src[i] as string;
    const start = i;
    const push = (type: TokType) => toks.push({ type, text: src.slice(start, i), pos });
    if (c === '#' || (c === '/' && src[i + 1] === '/')) {
      while (i < src.length && src[i] !== '\n') advance(1);
      push('COMMENT');
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      if (end < 0) throw new TranslateError(`${at(pos)}: comment not terminated`);
      advance(end + 2 - i);
      push('COMMENT');
    } else if (isLetter(c)) {
      while (i < src.length && (isLetter(src[i] as string) || isDigit(src[i] as string) || /[-.:]/.test(src[i] as string))) advance(1);
      const text = src.slice(start, i);
      push(text === 'true' || text === 'false' ? 'BOOL' : 'IDENT');
    } else if (isDigit(c) || (c === '-' && isDigit(src[i + 1] ?? ''))) {
      advance(1);
      let float = false;
      while (i < src.length && /[0-9.eE+\-xXa-fA-F]/.test(src[i] as string)) {
        if (src[i] === '.' || src[i] === 'e' || src[i] === 'E') float = true;
        advance(1);
      }
      push(float ? 'FLOAT' : 'NUMBER');
    } else if (c === '"') {
      advance(1);
      let braces = 0;
      while (true) {
        const d = src[i];
        if (d === undefined || (d === '\n' && braces === 0)) throw new TranslateError(`${at(pos)}: literal not terminated`);
        if (d === '\\') advance(2);
        else if (d === '$' && src[i + 1] === '{') {
          braces++;
          advance(2);
        } else if (d === '}' && braces > 0) {
          braces--;
          advance(1);
        } else if (d === '"' && braces === 0) {
          advance(1);
          break;
        } else advance(1);
      }
      push('STRING');
    } else if (c === '<' && src[i + 1] === '<') {
      const m = /^<<-?([A-Za-z_][A-Za-z0-9_]*)\n/.exec(src.slice(i));
      if (!m) throw new TranslateError(`${at(pos)}: heredoc expected marker name`);
      const anchor = m[1] as string;
      advance(m[0].length);
      while (true) {
        if (i >= src.length) throw new TranslateError(`${at(pos)}: heredoc not terminated`);
        const eol = src.indexOf('\n', i);
        const text = src.slice(i, eol < 0 ? src.length : eol);
        advance((eol < 0 ? src.length : eol + 1) - i);
        if (text.trim() === anchor) break;
      }
      push('HEREDOC');
    } else {
      const single: Record<string, TokType> = { '{': 'LBRACE', '}': 'RBRACE', '[': 'LBRACK', ']': 'RBRACK', '=': 'ASSIGN', ',': 'COMMA' };
      const type = single[c];
      if (type === undefined) throw new TranslateError(`${at(pos)}: illegal char`);
      advance(1);
      push(type);
    }
  }
}

// ---- AST and parser (hcl/parser/parser.go) ----

interface Comment {
  pos: Pos;
  text: string;
}
type CommentGroup = Comment[];

interface Literal {
  kind: 'literal';
  tok: Tok;
  lead: CommentGroup | null;
  line: CommentGroup | null;
}
interface ListNode {
  kind: 'list';
  lbrack: Pos;
  items: Node[];
}
interface ObjectNode {
  kind: 'object';
  lbrace: Pos;
  rbrace: Pos;
  items: Item[];
}
type Node = Literal | ListNode | ObjectNode;

interface Item {
  keys: Tok[];
  assign: Pos | null;
  val: Node;
  lead: CommentGroup | null;
  line: CommentGroup | null;
}

const nodePos = (n: Node): Pos => (n.kind === 'literal' ? n.tok.pos : n.kind === 'list' ? n.lbrack : n.lbrace);

class Parser {
  private i = 0;
  private tok: Tok = { type: 'EOF', text: '', pos: INVALID };
  private n = 0;
  readonly comments: CommentGroup[] = [];
  private leadComment: CommentGroup | null = null;
  private lineComment: CommentGroup | null = null;

  constructor(private readonly toks: Tok[]) {}

  private next(): Tok {
    const t = this.toks[Math.min(this.i, this.toks.length - 1)] as Tok;
    this.i++;
    return t;
  }

  private consumeComment(): number {
    let endline = this.tok.pos.line;
    if (this.tok.text.startsWith('/*')) for (const ch of this.tok.text) if (ch === '\n') endline++;
    this.tok = this.next();
    return endline;
  }

  private consumeCommentGroup(n: number): [CommentGroup, number] {
    const list: CommentGroup = [];
    let endline = this.tok.pos.line;
    while (this.tok.type === 'COMMENT' && this.tok.pos.line <= endline + n) {
      const c = { pos: this.tok.pos, text: this.tok.text };
      endline = this.consumeComment();
      list.push(c);
    }
    this.comments.push(list);
    return [list, endline];
  }

  scan(): Tok {
    if (this.n !== 0) {
      this.n = 0;
      return this.tok;
    }
    const prev = this.tok;
    this.tok = this.next();
    if (this.tok.type === 'COMMENT') {
      let comment: CommentGroup | null = null;
      let endline: number;
      if (this.tok.pos.line === prev.pos.line) {
        [comment, endline] = this.consumeCommentGroup(0);
        if (this.tok.pos.line !== endline) this.lineComment = comment;
      }
      endline = -1;
      while (this.tok.type === 'COMMENT') [comment, endline] = this.consumeCommentGroup(1);
      if (endline + 1 === this.tok.pos.line && this.tok.type !== 'RBRACE' && this.tok.type !== 'RBRACK') this.leadComment = comment;
    }
    return this.tok;
  }

  unscan(): void {
    this.n = 1;
  }

  objectList(inObject: boolean): Item[] {
    const items: Item[] = [];
    while (true) {
      if (inObject) {
        const t = this.scan();
        this.unscan();
        if (t.type === 'RBRACE') break;
      }
      const item = this.objectItem();
      if (item === null) break;
      items.push(item);
      if (this.scan().type !== 'COMMA') this.unscan();
    }
    return items;
  }

  private objectItem(): Item | null {
    const keys: Tok[] = [];
    let opener: Tok;
    for (;;) {
      const t = this.scan();
      if (t.type === 'EOF') {
        if (keys.length === 0) return null;
        throw new TranslateError(`${at(t.pos)}: key '${keys.map((k) => k.text).join(' ')}' expected start of object ('{') or assignment ('=')`);
      }
      if (t.type === 'ASSIGN') {
        if (keys.length > 1) throw new TranslateError(`${at(t.pos)}: nested object expected: LBRACE got: ASSIGN`);
        if (keys.length === 0) throw new TranslateError(`${at(t.pos)}: no object keys found!`);
        opener = t;
        break;
      }
      if (t.type === 'LBRACE') {
        if (keys.length === 0) throw new TranslateError(`${at(t.pos)}: expected: IDENT | STRING got: LBRACE`);
        opener = t;
        break;
      }
      if (t.type === 'IDENT' || t.type === 'STRING') keys.push(t);
      else throw new TranslateError(`${at(t.pos)}: expected: IDENT | STRING | ASSIGN | LBRACE got: ${t.type}`);
    }
    const lead = this.leadComment;
    this.leadComment = null;
    const val = opener.type === 'ASSIGN' ? this.object() : this.objectType();
    const item: Item = { keys, assign: opener.type === 'ASSIGN' ? opener.pos : null, val, lead, line: null };
    if (this.lineComment !== null) {
      item.line = this.lineComment;
      this.lineComment = null;
    }
    this.scan();
    if (nodePos(val).line === (keys[0] as Tok).pos.line && this.lineComment !== null) {
      item.line = this.lineComment;
      this.lineComment = null;
    }
    this.unscan();
    return item;
  }

  private object(): Node {
    const t = this.scan();
    switch (t.type) {
      case 'NUMBER':
      case 'FLOAT':
      case 'BOOL':
      case 'STRING':
      case 'HEREDOC':
        return { kind: 'literal', tok: t, lead: null, line: null };
      case 'LBRACE':
        return this.objectType();
      case 'LBRACK':
        return this.listType();
      default:
        throw new TranslateError(`${at(t.pos)}: Unknown token: ${t.type} ${t.text}`);
    }
  }

  private objectType(): ObjectNode {
    const lbrace = this.tok.pos;
    const items = this.objectList(true);
    const t = this.scan();
    if (t.type !== 'RBRACE') throw new TranslateError(`${at(t.pos)}: object expected closing RBRACE got: ${t.type}`);
    return { kind: 'object', lbrace, rbrace: t.pos, items };
  }

  private listType(): ListNode {
    const l: ListNode = { kind: 'list', lbrack: this.tok.pos, items: [] };
    let needComma = false;
    for (;;) {
      const t = this.scan();
      if (needComma && t.type !== 'COMMA' && t.type !== 'RBRACK') {
        throw new TranslateError(`${at(t.pos)}: error parsing list, expected comma or list end, got: ${t.type}`);
      }
      switch (t.type) {
        case 'BOOL':
        case 'NUMBER':
        case 'FLOAT':
        case 'STRING':
        case 'HEREDOC': {
          const lit: Literal = { kind: 'literal', tok: t, lead: this.leadComment, line: null };
          this.leadComment = null;
          l.items.push(lit);
          needComma = true;
          break;
        }
        case 'COMMA': {
          this.scan();
          const last = l.items[l.items.length - 1];
          if (this.lineComment !== null && last?.kind === 'literal') {
            last.line = this.lineComment;
            this.lineComment = null;
          }
          this.unscan();
          needComma = false;
          break;
        }
        case 'LBRACE':
          l.items.push(this.objectType());
          needComma = true;
          break;
        case 'LBRACK':
          l.items.push(this.listType());
          break;
        case 'RBRACK':
          return l;
        default:
          throw new TranslateError(`${at(t.pos)}: unexpected token while parsing list: ${t.type}`);
      }
    }
  }
}

// ---- printer (hcl/printer/nodes.go, two-space indents) ----

const UNINDENT = '\uE123';

class Printer {
  private prev: Pos = INVALID;
  private readonly standalone: CommentGroup[];

  constructor(comments: CommentGroup[], root: Item[]) {
    const owned = new Set<Comment>();
    const claim = (g: CommentGroup | null) => g?.forEach((c) => owned.add(c));
    const walkNode = (n: Node) => {
      if (n.kind === 'literal') {
        claim(n.lead);
        claim(n.line);
      } else if (n.kind === 'list') n.items.forEach(walkNode);
      else walkItems(n.items);
    };
    const walkItems = (items: Item[]) => {
      for (const it of items) {
        claim(it.lead);
        claim(it.line);
        walkNode(it.val);
      }
    };
    walkItems(root);
    this.standalone = comments
      .filter((g) => g.length > 0 && !g.some((c) => owned.has(c)))
      .sort((a, b) => (a[0] as Comment).pos.offset - (b[0] as Comment).pos.offset);
  }

  file(items: Item[]): string {
    let buf = '';
    let index = 0;
    for (;;) {
      const nextItem = index !== items.length ? itemPos(items[index] as Item) : INFINITY;
      for (const group of this.standalone) {
        let printed = false;
        let newlinePrinted = false;
        for (const c of group) {
          if (after(c.pos, this.prev) && before(c.pos, nextItem)) {
            if (!newlinePrinted && this.prev.line > 0 && index === items.length) {
              buf += '\n\n';
              newlinePrinted = true;
            }
            buf += c.text + '\n';
            printed = true;
          }
        }
        if (printed && index !== items.length) buf += '\n';
      }
      if (index === items.length) break;
      const cur = items[index] as Item;
      this.prev = itemPos(cur);
      buf += this.objectItem(cur);
      if (index !== items.length - 1) {
        buf += '\n';
        const next = items[index + 1] as Item;
        if (itemPos(next).line !== itemPos(cur).line + 1 || !singleLineObject(next) || !singleLineObject(cur)) buf += '\n';
      }
      index++;
    }
    return unindent(buf);
  }

  private output(n: Node): string {
    if (n.kind === 'literal') return this.literal(n);
    if (n.kind === 'list') return this.list(n);
    return this.objectType(n);
  }

  private literal(lit: Literal): string {
    let text = lit.tok.text;
    if (lit.tok.type === 'HEREDOC') {
      if (text.endsWith('\n')) text = text.slice(0, -1);
      return heredocIndent(text);
    }
    if (lit.tok.type === 'STRING' && text.includes('\n')) return heredocIndent(text);
    return text;
  }

  private objectItem(o: Item): string {
    let buf = '';
    for (const c of o.lead ?? []) buf += c.text + '\n';
    const keyLine = (o.keys[0] as Tok).pos.line;
    if (o.line !== null && nodePos(o.val).line !== keyLine) for (const c of o.line) buf += c.text + '\n';
    o.keys.forEach((k, i) => {
      buf += k.text + ' ';
      if (o.assign !== null && i === o.keys.length - 1 && o.keys.length === 1) buf += '= ';
    });
    buf += this.output(o.val);
    if (o.line !== null && nodePos(o.val).line === keyLine) buf += ' ' + o.line.map((c) => c.text).join('');
    return buf;
  }

  private objectType(o: ObjectNode): string {
    let buf = '{';
    let index = 0;
    let commented = false;
    let newlinePrinted = false;
    for (;;) {
      const nextItem = index !== o.items.length ? itemPos(o.items[index] as Item) : o.rbrace;
      for (const group of this.standalone) {
        let printed = false;
        let lastCommentPos: Pos = INVALID;
        for (const c of group) {
          if (after(c.pos, this.prev) && before(c.pos, nextItem)) {
            if (!newlinePrinted) {
              newlinePrinted = true;
              buf += '\n';
            }
            if (index > 0) {
              commented = true;
              buf += '\n';
            }
            lastCommentPos = c.pos;
            buf += indent(heredocIndent(c.text));
            printed = true;
          }
        }
        if (printed) {
          buf += '\n';
          if (nextItem !== o.rbrace && nextItem.line !== lastCommentPos.line + 1) buf += '\n';
        }
      }
      if (index === o.items.length) {
        this.prev = o.rbrace;
        break;
      }
      if (!newlinePrinted) {
        buf += '\n';
        newlinePrinted = true;
      }
      const aligned: Item[] = [];
      for (const item of o.items.slice(index)) {
        if (o.items.length === 1) break;
        if (lines(this.objectItem(item)) > 2) break;
        const curPos = itemPos(item);
        const nextPos = index !== o.items.length - 1 ? itemPos(o.items[index + 1] as Item) : INVALID;
        const prevPos = index !== 0 ? itemPos(o.items[index - 1] as Item) : INVALID;
        if (curPos.line + 1 === nextPos.line) {
          aligned.push(item);
          index++;
          continue;
        }
        if (curPos.line - 1 === prevPos.line) {
          aligned.push(item);
          index++;
          if (curPos.line + 1 !== nextPos.line) break;
          continue;
        }
        break;
      }
      if (!commented && index !== aligned.length) buf += '\n';
      if (aligned.length >= 1) {
        this.prev = itemPos(aligned[aligned.length - 1] as Item);
        buf += indent(this.alignedItems(aligned));
      } else {
        const item = o.items[index] as Item;
        this.prev = itemPos(item);
        buf += indent(this.objectItem(item));
        index++;
      }
      buf += '\n';
    }
    return buf + '}';
  }

  private alignedItems(items: Item[]): string {
    let longestKey = 0;
    let longestVal = 0;
    for (const item of items) {
      longestKey = Math.max(longestKey, (item.keys[0] as Tok).text.length);
      longestVal = Math.max(longestVal, this.output(item.val).length);
    }
    const out: string[] = [];
    for (const item of items) {
      let buf = '';
      for (const c of item.lead ?? []) buf += c.text + '\n';
      item.keys.forEach((k, i) => {
        buf += k.text + ' '.repeat(longestKey - k.text.length + 1);
        if (i === item.keys.length - 1 && item.keys.length === 1) buf += '= ';
      });
      const val = this.output(item.val);
      buf += val;
      if (nodePos(item.val).line === (item.keys[0] as Tok).pos.line && item.line !== null) {
        buf += ' '.repeat(longestVal - val.length + 1) + item.line.map((c) => c.text).join('');
      }
      out.push(buf);
    }
    return out.join('\n');
  }

  private list(l: ListNode): string {
    const single = l.items.every(
      (it) => nodePos(it).line === l.lbrack.line && it.kind === 'literal' && (it.tok.type !== 'HEREDOC' || l.items.length === 1) && it.line === null,
    );
    if (single) {
      return '[' + l.items.map((it) => this.output(it) + (it.kind === 'literal' && it.tok.type === 'HEREDOC' ? '\n' : '')).join(', ') + ']';
    }
    let buf = '[\n';
    let longest = 0;
    for (const it of l.items) if (it.kind === 'literal') longest = Math.max(longest, it.tok.text.length);
    let haveEmptyLine = false;
    l.items.forEach((it, i) => {
      let leadComment = false;
      if (it.kind === 'literal' && it.lead !== null) {
        leadComment = true;
        if (!haveEmptyLine && i !== 0) buf += '\n';
        for (const c of it.lead) buf += indent(c.text) + '\n';
      }
      const val = this.output(it);
      buf += indent(val);
      let comma = ',';
      if (it.kind === 'literal' && it.tok.type === 'HEREDOC') {
        buf += '\n';
        comma = indent(comma);
      }
      buf += comma;
      if (it.kind === 'literal' && it.line !== null) buf += ' ' + ' '.repeat(Math.max(0, longest - val.length)) + it.line.map((c) => c.text).join('');
      buf += '\n';
      haveEmptyLine = leadComment && i !== l.items.length - 1;
      if (haveEmptyLine) buf += '\n';
    });
    return buf + ']';
  }
}

function itemPos(item: Item): Pos {
  return (item.keys[0] as Tok).pos;
}

function singleLineObject(item: Item): boolean {
  if (item.lead !== null || item.assign !== null) return false;
  return item.val.kind === 'object' && item.val.items.length === 0;
}

function lines(text: string): number {
  let n = 1;
  for (const c of text) if (c === '\n') n++;
  return n;
}

function indent(text: string): string {
  let out = '';
  let bol = true;
  for (const c of text) {
    if (bol && c !== '\n') out += '  ';
    out += c;
    bol = c === '\n';
  }
  return out;
}

function heredocIndent(text: string): string {
  let out = '';
  let bol = false;
  for (const c of text) {
    if (bol && c !== '\n') out += UNINDENT;
    out += c;
    bol = c === '\n';
  }
  return out;
}

function unindent(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== UNINDENT) {
      out += text[i];
      continue;
    }
    // Drop the indentation printed before the marker, back to the line's start.
    const bol = out.lastIndexOf('\n');
    out = out.slice(0, bol + 1);
  }
  return out;
}

/** Legacy rules → the same rules in 1.4's syntax. Throws TranslateError (`Failed to parse rules: …`). */
export function translateLegacyRules(text: string): string {
  let items: Item[];
  let parser: Parser;
  try {
    parser = new Parser(scanAll(text.replace(/\r\n/g, '\n')));
    items = parser.objectList(false);
  } catch (err) {
    if (err instanceof TranslateError) throw new TranslateError(`Failed to parse rules: ${err.message}`);
    throw err;
  }
  const rename = (list: Item[]) => {
    for (const item of list) {
      for (const key of item.keys) {
        const to = key.type === 'IDENT' ? RENAMED.get(key.text) : undefined;
        if (to !== undefined) key.text = to;
      }
      renameNode(item.val);
    }
  };
  const renameNode = (n: Node) => {
    if (n.kind === 'object') rename(n.items);
    else if (n.kind === 'list') n.items.forEach(renameNode);
  };
  rename(items);
  return new Printer(parser.comments, items).file(items);
}
