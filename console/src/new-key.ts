// Creating a key of any of the five types with its first value and an optional TTL; never over an existing key
// (If-None-Match: *).
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { send } from './raw';
import { describe, type Session } from './session';

const FIRST: Record<string, [string, string]> = {
  string: ['value', ''],
  hash: ['field', 'value'],
  set: ['member', ''],
  list: ['item', ''],
  zset: ['member', 'score'],
};

/** The create request of a type: its path and body. */
function creation(type: string, a: string, b: string, ttl: number | undefined): [string, object] {
  const t = ttl === undefined ? {} : { ttl };
  switch (type) {
    case 'hash':
      return ['/store/hash/{key}', { fields: { [a]: b }, ...t }];
    case 'set':
      return ['/store/set/{key}', { members: [a], ...t }];
    case 'list':
      return ['/store/list/{key}/push', { values: [a], ...t }];
    case 'zset':
      return ['/store/zset/{key}', { members: { [a]: Number(b) }, ...t }];
    default:
      return ['/store/string/{key}', { value: a, ...t }];
  }
}

export function NewKey(props: {
  session: Session;
  prefix: string;
  onCreated: (key: string) => void;
  onCancel: () => void;
}) {
  const [key, setKey] = useState(props.prefix);
  const [type, setType] = useState('string');
  const [a, setA] = useState('');
  const [b, setB] = useState('');
  const [ttl, setTtl] = useState('');
  const [error, setError] = useState('');
  const [labelA, labelB] = FIRST[type] as [string, string];
  const val = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);
  const create = async (e: Event) => {
    e.preventDefault();
    const [path, body] = creation(type, a, b, ttl ? Number(ttl) : undefined);
    try {
      await send(props.session, 'POST', path, { key }, { body, ifNoneMatch: '*' });
      props.onCreated(key);
    } catch (err) {
      setError(describe(err));
    }
  };
  return html`<section class="panel detail" id="new-key-form">
    <h2>New key</h2>
    <form onSubmit=${create}>
      <label>Key <input id="create-key" value=${key} onInput=${val(setKey)} /></label>
      <label>Type <select id="create-type" value=${type} onChange=${val(setType)}>
        ${Object.keys(FIRST).map((t) => html`<option value=${t}>${t}</option>`)}</select></label>
      <label>${labelA} <input id="create-a" value=${a} onInput=${val(setA)} /></label>
      ${labelB && html`<label>${labelB} <input id="create-b" value=${b} onInput=${val(setB)} /></label>`}
      <label>TTL (seconds, optional) <input id="create-ttl" type="number" min="1" value=${ttl} onInput=${val(setTtl)} /></label>
      <div class="row"><button type="submit" id="create">Create</button> <button type="button" onClick=${props.onCancel}>Cancel</button></div>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
  </section>`;
}
