// Managed proxies follow the agent's local state (Consul's proxy manager watches local.State): on
// each change, every local service with a managed proxy has its process ensured (started, or
// restarted when its command or token changed), and a proxy whose service is gone is stopped.
import type { LocalService } from '../local/local-services';
import type { ManagedProxies } from './managed-proxies';

export interface FollowedState {
  services(): LocalService[];
  onChange(fn: () => void): () => void;
}

/** Keep `proxies` in step with `local` from now on (and at once); returns stop(). */
export function followManagedProxies(local: FollowedState, proxies: ManagedProxies): () => void {
  const running = new Set<string>();
  const step = () => {
    const wanted = new Set<string>();
    for (const s of local.services()) {
      if (!s.managed) continue;
      wanted.add(s.service.ID);
      proxies.ensure({ proxyServiceId: s.service.ID, execMode: s.managed.execMode === 'script' ? 'script' : 'daemon', command: s.managed.command, token: s.managed.token });
    }
    for (const id of [...running]) {
      if (wanted.has(id)) continue;
      proxies.remove(id);
      running.delete(id);
    }
    for (const id of wanted) running.add(id);
  };
  step();
  const cancel = local.onChange(step);
  return () => {
    cancel();
    proxies.stopAll();
  };
}
