// The health badge: colour for a glance, and the same in words (colour alone is not accessible).
import { h } from './dom.js';
import { worst, type Health, type Rollup } from './health.js';

export function rollupBadge(r: Rollup): HTMLElement {
  const state = worst(r);
  const words = state === 'none' ? 'no checks' : `${r.passing} passing, ${r.warning} warning, ${r.critical} critical`;
  return h(
    'span',
    { class: `badge health-${state}`, 'data-health': state, title: words, 'aria-label': `health ${state}: ${words}` },
    state === 'none' ? 'no checks' : [h('span', { 'aria-hidden': 'true' }, `✓ ${r.passing}  ! ${r.warning}  ✗ ${r.critical}`)],
  );
}

export function statusBadge(status: Health | string): HTMLElement {
  const state = status === 'passing' || status === 'warning' ? status : 'critical';
  return h('span', { class: `badge health-${state}`, 'data-health': state }, status);
}
