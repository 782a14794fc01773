// The web UI's security headers (issue 33 finding 10), sent with every answer under /ui/. The UI is
// one module script, one stylesheet and fetches to this agent: nothing inline, nothing from another
// origin, so the policy can be strict — a string from the catalog that slipped into markup could
// not run, and no other site may frame the UI (clickjacking a form that deletes keys or tokens).
// packages/ui/test/ui-browser.test.ts loads the UI under these headers with no CSP violation.
export const UI_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    // The favicon is `data:,` (index.html): an empty icon, so the browser asks for no file.
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  // For browsers without frame-ancestors.
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
});
