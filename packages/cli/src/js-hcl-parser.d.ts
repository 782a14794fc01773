/** The untyped HCL v1 parser (GopherJS build of hashicorp/hcl): HCL or JSON text → JSON text, or a string starting `unable` on a syntax error. */
declare module 'js-hcl-parser' {
  export function parse(input: string): string;
}
