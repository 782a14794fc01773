// Intentions: list (live), create, edit, delete.
import { del, get, post, put } from '../api.js';
import { watch } from '../blocking.js';
import { announce, errorBox, field, h, show, table } from '../dom.js';
import { actionButton, title, type ViewContext } from '../view.js';

interface Intention {
  ID: string;
  SourceName: string;
  DestinationName: string;
  Action: 'allow' | 'deny';
  Description?: string;
  Precedence?: number;
}

export function intentionsView(ctx: ViewContext): void {
  if (ctx.route.rest) return editView(ctx, ctx.route.rest);
  const errors = errorBox();
  const list = h('div', { 'aria-busy': 'true' }, 'Loading…');
  const form = intentionForm('Create an intention', undefined, async (input) => {
    await post('/v1/connect/intentions', input);
    announce(`Created intention ${input.SourceName} → ${input.DestinationName}`);
  });
  show(ctx.root, title('Intentions'), errors.el, list, form);
  watch<Intention[]>('/v1/connect/intentions', {
    signal: ctx.signal,
    onValue: (v) => {
      errors.set(undefined, 'list');
      list.removeAttribute('aria-busy');
      const rows = (v ?? []).map((i) =>
        h(
          'tr',
          { 'data-intention': i.ID },
          h('th', { scope: 'row' }, i.SourceName),
          h('td', {}, i.DestinationName),
          h('td', {}, h('span', { class: `badge action-${i.Action}` }, i.Action)),
          h('td', {}, String(i.Precedence ?? '')),
          h('td', {}, i.Description ?? ''),
          h(
            'td',
            {},
            h('a', { href: ctx.link('intentions', i.ID), 'aria-label': `Edit ${i.SourceName} → ${i.DestinationName}` }, 'Edit'),
            ' ',
            actionButton(
              'Delete',
              async () => {
                if (!confirm(`Delete the intention ${i.SourceName} → ${i.DestinationName}?`)) return;
                try {
                  await del(`/v1/connect/intentions/${encodeURIComponent(i.ID)}`);
                  errors.set(undefined, 'action');
                  announce('Intention deleted');
                } catch (e) {
                  errors.set(e as Error, 'action');
                }
              },
              { 'aria-label': `Delete ${i.SourceName} → ${i.DestinationName}` },
            ),
          ),
        ),
      );
      show(list, table('Intentions, highest precedence first', ['Source', 'Destination', 'Action', 'Precedence', 'Description', 'Actions'], rows, 'No intentions.'));
    },
    onError: (e) => errors.set(e, 'list'),
  });
}

type IntentionInput = Pick<Intention, 'SourceName' | 'DestinationName' | 'Action' | 'Description'>;

function intentionForm(heading: string, initial: Intention | undefined, save: (input: IntentionInput) => Promise<void>): HTMLElement {
  const errors = errorBox();
  const source = h('input', { name: 'source', required: true, value: initial?.SourceName ?? '', autocomplete: 'off' });
  const destination = h('input', { name: 'destination', required: true, value: initial?.DestinationName ?? '', autocomplete: 'off' });
  const action = h('select', { name: 'action' }, h('option', { value: 'allow' }, 'allow'), h('option', { value: 'deny' }, 'deny'));
  action.value = initial?.Action ?? 'allow';
  const description = h('input', { name: 'description', value: initial?.Description ?? '', autocomplete: 'off' });
  const headingId = `intention-form-${initial ? 'edit' : 'create'}`;
  const form = h(
    'form',
    { class: 'panel', 'aria-labelledby': headingId },
    h('h2', { id: headingId }, heading),
    errors.el,
    field('Source service', source, '* matches every service'),
    field('Destination service', destination, '* matches every service'),
    field('Action', action),
    field('Description', description),
    h('button', { type: 'submit' }, initial ? 'Save' : 'Create'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const input: IntentionInput = {
      SourceName: source.value.trim(),
      DestinationName: destination.value.trim(),
      Action: action.value as 'allow' | 'deny',
      Description: description.value,
    };
    save(input)
      .then(() => {
        errors.set(undefined);
        if (!initial) form.reset();
      })
      .catch((e: Error) => errors.set(e));
  });
  return form;
}

function editView(ctx: ViewContext, id: string): void {
  const errors = errorBox();
  const body = h('div', { 'aria-busy': 'true' }, 'Loading…');
  show(ctx.root, h('p', {}, h('a', { href: ctx.link('intentions') }, '← All intentions')), title('Edit intention'), errors.el, body);
  get<Intention>(`/v1/connect/intentions/${encodeURIComponent(id)}`, { signal: ctx.signal })
    .then((r) => {
      body.removeAttribute('aria-busy');
      const current = r.value!;
      show(
        body,
        intentionForm(`${current.SourceName} → ${current.DestinationName}`, current, async (input) => {
          await put(`/v1/connect/intentions/${encodeURIComponent(id)}`, input);
          announce('Intention saved');
          ctx.go('intentions');
        }),
      );
    })
    .catch((e: Error) => {
      if (!ctx.signal.aborted) errors.set(e);
    });
}
