// GET /v1/agent/host: facts about the machine the agent runs on, in Consul's shape (its debug
// package's HostInfo, gopsutil's JSON names), gathered with node:os and statfs. A fact that cannot
// be read is left out and its reason listed in Errors, as Consul does.
import { readFile, statfs } from 'node:fs/promises';
import os from 'node:os';

export interface HostFacts {
  Memory: Record<string, number> | null;
  CPU: Record<string, unknown>[] | null;
  Host: Record<string, unknown> | null;
  Disk: Record<string, unknown> | null;
  /** Unix time in nanoseconds. */
  CollectionTime: number;
  Errors: string[];
}

export async function hostFacts(diskPath: string): Promise<HostFacts> {
  const errors: string[] = [];
  const attempt = async <T>(what: string, f: () => Promise<T> | T): Promise<T | null> => {
    try {
      return await f();
    } catch (err) {
      errors.push(`${what}: ${(err as Error).message}`);
      return null;
    }
  };
  const [memory, disk, host] = await Promise.all([attempt('memory', memoryFacts), attempt('disk', () => diskFacts(diskPath)), attempt('host', hostInfo)]);
  const cpu = await attempt('cpu', cpuFacts);
  return { Memory: memory, CPU: cpu, Host: host, Disk: disk, CollectionTime: Date.now() * 1e6, Errors: errors };
}

function cpuFacts(): Record<string, unknown>[] {
  return os.cpus().map((c, i) => ({
    cpu: i,
    vendorId: '',
    family: '',
    model: '',
    stepping: 0,
    physicalId: '',
    coreId: String(i),
    cores: 1,
    modelName: c.model,
    mhz: c.speed,
    cacheSize: 0,
    flags: [],
    microcode: '',
  }));
}

/** /proc/meminfo where there is one (Linux), else what node:os knows. */
async function memoryFacts(): Promise<Record<string, number>> {
  const total = os.totalmem();
  let free = os.freemem();
  let available = free;
  let buffers = 0;
  let cached = 0;
  try {
    const info = await readFile('/proc/meminfo', 'utf8');
    // `Key:   123 kB` lines, read into a Map (no pattern built from a string: test/security/regexp-uses.test.ts).
    const fields = new Map(info.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()] as const));
    const kb = (key: string) => Number(/^(\d+)/.exec(fields.get(key) ?? '')?.[1] ?? NaN) * 1024;
    if (Number.isFinite(kb('MemFree'))) free = kb('MemFree');
    if (Number.isFinite(kb('MemAvailable'))) available = kb('MemAvailable');
    if (Number.isFinite(kb('Buffers'))) buffers = kb('Buffers');
    if (Number.isFinite(kb('Cached'))) cached = kb('Cached');
  } catch {
    // not Linux: node:os's figures stand
  }
  const used = total - available;
  return { total, available, used, usedPercent: total > 0 ? (used / total) * 100 : 0, free, buffers, cached };
}

async function diskFacts(path: string): Promise<Record<string, unknown>> {
  const s = await statfs(path);
  const total = s.blocks * s.bsize;
  const free = s.bavail * s.bsize;
  const used = (s.blocks - s.bfree) * s.bsize;
  const inodesUsed = s.files - s.ffree;
  return {
    path,
    fstype: '',
    total,
    free,
    used,
    usedPercent: used + free > 0 ? (used / (used + free)) * 100 : 0,
    inodesTotal: s.files,
    inodesUsed,
    inodesFree: s.ffree,
    inodesUsedPercent: s.files > 0 ? (inodesUsed / s.files) * 100 : 0,
  };
}

function hostInfo(): Record<string, unknown> {
  const uptime = Math.floor(os.uptime());
  return {
    hostname: os.hostname(),
    uptime,
    bootTime: Math.floor(Date.now() / 1000) - uptime,
    procs: 0,
    os: os.platform(),
    platform: os.platform(),
    platformFamily: '',
    platformVersion: os.release(),
    kernelVersion: os.release(),
    kernelArch: os.machine(),
    virtualizationSystem: '',
    virtualizationRole: '',
    hostid: '',
  };
}
