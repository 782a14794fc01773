/** The untyped HCL v1 parser (GopherJS build of hashicorp/hcl). */
declare module 'js-hcl-parser' {
  /**
   * HCL or JSON text → JSON text of the decoded value. On a syntax error it does not
   * throw: it returns a string starting with `unable`, e.g.
   * `unable to parse JSON: At 1:33: object expected closing RBRACE got: EOF`.
   */
  export function parse(input: string): string;
  export function stringify(input: string): string;
}
