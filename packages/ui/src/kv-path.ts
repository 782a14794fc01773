// KV keys as folders: `/` separates levels, a key ending in `/` is a folder. Pure helpers.

/** The folder a key or folder lives in ('' for the root). */
export function parentFolder(key: string): string {
  const trimmed = key.endsWith('/') ? key.slice(0, -1) : key;
  const i = trimmed.lastIndexOf('/');
  return i < 0 ? '' : trimmed.slice(0, i + 1);
}

/** The last segment, as shown in a listing (`a/b/` → `b/`). */
export function baseName(key: string): string {
  return key.slice(parentFolder(key).length);
}

export function isFolder(key: string): boolean {
  return key === '' || key.endsWith('/');
}

/** Breadcrumbs of a folder or key: each ancestor folder with its label. */
export function crumbs(key: string): Array<{ folder: string; label: string }> {
  const out = [{ folder: '', label: 'All keys' }];
  let at = '';
  for (const seg of key.split('/').slice(0, -1)) {
    at += seg + '/';
    out.push({ folder: at, label: seg });
  }
  return out;
}

/** KV values travel base64-encoded; the editor shows them as UTF-8 text. */
export function decodeValue(b64: string | null): string {
  if (!b64) return '';
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}
