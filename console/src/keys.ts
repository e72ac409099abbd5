// The keys browser: find keys by prefix and type page by page, open one, create one.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import type { KeyEntry } from '../../clients/typescript/src/index';
import type { Feed } from './feed';
import { KeyDetail } from './key-detail';
import { NewKey } from './new-key';
import { describe, type Session } from './session';

const TYPES = ['', 'string', 'hash', 'set', 'list', 'zset'];
/** Keys a search aims for before it stops and offers "more" (SCAN may answer sparse pages). */
const PAGE = 50;

const ttlText = (ttl: number) => (ttl < 0 ? '—' : `${ttl} s`);

export function KeysView({ session, feed }: { session: Session; feed: Feed }) {
  const [prefix, setPrefix] = useState(session.who.prefix ?? '');
  const [type, setType] = useState('');
  const [entries, setEntries] = useState<KeyEntry[]>([]);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [complete, setComplete] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);

  /** Reads pages until PAGE keys came or the walk is complete (at most 10 pages a click). */
  const load = async (from: string | undefined, shown: KeyEntry[]) => {
    setBusy(true);
    setError('');
    try {
      let next = from;
      let found = shown;
      let done = false;
      for (let i = 0; i < 10 && found.length - shown.length < PAGE && !done; i++) {
        const page = await session.gw.keys.page({
          prefix,
          type: type || undefined,
          limit: PAGE,
          cursor: next,
        });
        const seen = new Set(found.map((e) => e.key));
        found = [...found, ...page.keys.filter((e) => !seen.has(e.key))];
        next = page.cursor;
        done = page.complete;
      }
      setEntries(found);
      setCursor(next);
      setComplete(done);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  const search = (e?: Event) => {
    e?.preventDefault();
    void load(undefined, []);
  };
  useEffect(() => search(), []);

  return html`<div class="columns">
    <section class="panel keys">
      <form class="row" onSubmit=${search}>
        <input id="prefix" placeholder="Key prefix" value=${prefix}
          onInput=${(e: Event) => setPrefix((e.target as HTMLInputElement).value)} />
        <select id="type" value=${type} onChange=${(e: Event) => setType((e.target as HTMLSelectElement).value)}>
          ${TYPES.map((t) => html`<option value=${t}>${t || 'any type'}</option>`)}
        </select>
        <button type="submit" id="search" disabled=${busy}>Search</button>
      </form>
      ${
        session.canWrite &&
        html`<button id="new-key" onClick=${() => {
          setCreating(true);
          setOpen(null);
        }}>New key</button>`
      }
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <table class="grid" id="key-list">
        <thead><tr><th>Key</th><th>Type</th><th>TTL</th></tr></thead>
        <tbody>
          ${entries.map(
            (e) => html`<tr key=${e.key} class=${open === e.key ? 'selected' : ''}>
              <td><button class="link key" data-key=${e.key} onClick=${() => {
                setOpen(e.key);
                setCreating(false);
              }}>${e.key}</button></td>
              <td><span class=${`type type-${e.type}`}>${e.type}</span></td><td>${ttlText(e.ttl)}</td></tr>`,
          )}
        </tbody>
      </table>
      <p class="muted" id="key-count">${entries.length} key${entries.length === 1 ? '' : 's'}${complete ? '' : ', more to find'}</p>
      ${!complete && html`<button id="more" disabled=${busy} onClick=${() => load(cursor, entries)}>More</button>`}
    </section>
    ${
      creating &&
      html`<${NewKey} session=${session} prefix=${session.who.prefix ?? ''}
      onCreated=${(key: string) => {
        setCreating(false);
        setOpen(key);
        void load(undefined, []);
      }}
      onCancel=${() => setCreating(false)} />`
    }
    ${
      open &&
      html`<${KeyDetail} key=${open} name=${open} session=${session} feed=${feed}
      onDeleted=${() => {
        setOpen(null);
        void load(undefined, []);
      }} />`
    }
  </div>`;
}
