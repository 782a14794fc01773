// Asking a real resolver tool: `dig` (bind9-dnsutils), run asynchronously so the in-process agent
// keeps answering meanwhile. Its text output is read into status, flags and the three sections.
import { execFile, execFileSync } from 'node:child_process';

export interface DigRecord {
  name: string;
  ttl: number;
  type: string;
  data: string;
}

export interface DigAnswer {
  status: string;
  flags: string[];
  answer: DigRecord[];
  authority: DigRecord[];
  additional: DigRecord[];
  /** `;; SERVER: …(UDP)` or `(TCP)`. */
  transport: string;
  raw: string;
}

/** Why dig cannot be used here, or undefined when it can. */
export function digMissing(): string | undefined {
  try {
    execFileSync('dig', ['-v'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'dig is not installed (apt-get install -y bind9-dnsutils); the dig-based DNS tests are skipped';
  }
}

function records(lines: string[]): DigRecord[] {
  return lines.map((l) => {
    const [name, ttl, , type, ...data] = l.split(/\s+/);
    return { name, ttl: Number(ttl), type, data: data.join(' ') };
  });
}

export function dig(port: number, name: string, type = 'A', ...options: string[]): Promise<DigAnswer> {
  const args = ['@127.0.0.1', '-p', String(port), name, type, '+tries=1', '+time=3', '+nocmd', ...options];
  return new Promise((resolve, reject) => {
    execFile('dig', args, { timeout: 15_000 }, (err, stdout) => {
      if (err && !stdout) return reject(err);
      const lines = stdout.split('\n');
      const status = /status: (\w+)/.exec(stdout)?.[1] ?? '';
      const flags = (/;; flags: ([a-z ]*);/.exec(stdout)?.[1] ?? '').trim().split(/\s+/).filter(Boolean);
      const section = (title: string) => {
        const start = lines.indexOf(`;; ${title} SECTION:`);
        if (start < 0) return [];
        const out: string[] = [];
        for (let i = start + 1; i < lines.length && lines[i].trim() !== ''; i++) out.push(lines[i]);
        return records(out);
      };
      resolve({
        status,
        flags,
        answer: section('ANSWER'),
        authority: section('AUTHORITY'),
        additional: section('ADDITIONAL'),
        transport: /;; SERVER: .*\((UDP|TCP)\)/.exec(stdout)?.[1] ?? '',
        raw: stdout,
      });
    });
  });
}
