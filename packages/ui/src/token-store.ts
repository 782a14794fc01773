// The ACL token the user typed into the header box. It lives in this browser's localStorage (as
// Consul's UI keeps it) so it survives reloads, and is sent as X-Registry-Token on every request.
const KEY = 'registry.token';

export function getToken(): string {
  try {
    return localStorage.getItem(KEY) ?? '';
  } catch {
    return ''; // storage disabled (private mode, file://): behave as anonymous
  }
}

export function setToken(token: string): void {
  try {
    if (token) localStorage.setItem(KEY, token);
    else localStorage.removeItem(KEY);
  } catch {
    // nothing to do: without storage the token only lasts until the next request fails
  }
}
