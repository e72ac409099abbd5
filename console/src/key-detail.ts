// One key: its value by type, edited under If-Match (a change made meanwhile is shown as a conflict, never
// overwritten), its TTL, and delete. A change event for the key reloads it, unless an edit is under way.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { GatewayError } from '../../clients/typescript/src/index';
import { editorFor, type Loaded } from './editors';
import type { Feed } from './feed';
import { FAMILIES, send } from './raw';
import { describe, isConflict, type Session } from './session';

/** An ETag no key has: a paged read of a long list or sorted set computes its ETag only when one is asked for. */
const ASK_ETAG = '"console-asks-for-the-etag"';
/** Elements shown of a hash or set too large to be read whole. */
const PAGE = 200;

let reads = 0;

async function read(session: Session, key: string): Promise<Loaded | null> {
  const info = await session.gw.keys.info(key);
  if (!info) return null;
  const family = FAMILIES[info.type];
  if (!family) return { type: info.type, ttl: info.ttl, etag: undefined, version: ++reads, value: null };
  const query = family === 'list' ? { start: 0, stop: 199 } : family === 'zset' ? { limit: 200 } : undefined;
  const path = `/store/${family}/{key}`;
  const got = await send(session, 'GET', path, { key }, { query, ifNoneMatch: query && ASK_ETAG }).catch(
    (err) => {
      // A hash or set above 1,000 elements is read in pages only: show its first one.
      if (!(err instanceof GatewayError && err.error === 'reply_too_large') || query) throw err;
      return send(session, 'GET', path, { key }, { query: { limit: PAGE }, ifNoneMatch: ASK_ETAG });
    },
  );
  return { type: info.type, ttl: got.data.ttl, etag: got.etag, version: ++reads, value: got.data };
}

export interface Actions {
  /** Runs a write with the loaded ETag as If-Match, then reloads; a 412 shows the conflict instead. */
  write: (fn: (ifMatch: string | undefined) => Promise<unknown>) => Promise<boolean>;
  /** An edit is under way: a change event then only says so instead of reloading. */
  editing: () => void;
}

export function KeyDetail(props: { name: string; session: Session; feed: Feed; onDeleted: () => void }) {
  const { name, session, feed } = props;
  const [loaded, setLoaded] = useState<Loaded | null | undefined>(undefined);
  const [error, setError] = useState('');
  const [conflict, setConflict] = useState(false);
  const [dirty, setDirty] = useState(false);
  const [notice, setNotice] = useState('');
  const [confirming, setConfirming] = useState(false);
  const [ttlDraft, setTtlDraft] = useState('');
  /** A write and the read after it are under way: the ETag in hand is about to change. */
  const [busy, setBusy] = useState(false);

  const load = async () => {
    try {
      setLoaded(await read(session, name));
      setDirty(false);
      setConflict(false);
      setNotice('');
      setError('');
    } catch (err) {
      setError(describe(err));
    }
  };
  useEffect(() => {
    setLoaded(undefined);
    void load();
  }, [name]);

  const latest = feed.events[0];
  useEffect(() => {
    if (!latest || (latest.key !== name && latest.op !== 'flush')) return;
    if (dirty)
      setNotice(`Changed meanwhile (${latest.op} at ${new Date(latest.time).toLocaleTimeString()}).`);
    else void load();
  }, [latest?.id]);

  const actions: Actions = {
    write: async (fn) => {
      setError('');
      setBusy(true);
      try {
        await fn(loaded?.etag);
      } catch (err) {
        if (isConflict(err)) setConflict(true);
        else setError(describe(err));
        setBusy(false);
        return false;
      }
      await load();
      setBusy(false);
      return true;
    },
    editing: () => setDirty(true),
  };

  if (loaded === undefined)
    return html`<section class="panel detail"><p class="muted">Loading ${name}…</p>${error && html`<p class="error">${error}</p>`}</section>`;
  if (loaded === null)
    return html`<section class="panel detail"><h2 class="key">${name}</h2><p class="muted" id="gone">This key does not exist (any more).</p></section>`;
  const family = FAMILIES[loaded.type];
  const path = `/store/${family}/{key}`;
  return html`<section class=${busy ? 'panel detail busy' : 'panel detail'} id="detail" data-key=${name} aria-busy=${busy}>
    <h2><span class="key">${name}</span> <span class=${`type type-${loaded.type}`}>${loaded.type}</span></h2>
    ${
      conflict &&
      html`<div class="conflict" role="alert" id="conflict">
        <strong>Conflict:</strong> this key was changed by someone else after you opened it (412 precondition_failed).
        Your change was not saved. <button id="reload" onClick=${load}>Reload</button></div>`
    }
    ${notice && !conflict && html`<div class="notice" id="notice">${notice} <button onClick=${load}>Reload</button></div>`}
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <p class="ttl" id="ttl">TTL: ${loaded.ttl < 0 ? 'no expiry' : `${loaded.ttl} s`}</p>
    ${
      session.canWrite &&
      family &&
      html`<div class="row">
        <input id="ttl-input" type="number" min="1" placeholder="seconds" value=${ttlDraft}
          onInput=${(e: Event) => setTtlDraft((e.target as HTMLInputElement).value)} />
        <button id="set-ttl" onClick=${() => actions.write((ifMatch) => send(session, 'POST', `${path}/expire`, { key: name }, { body: { ttl: Number(ttlDraft) }, ifMatch }))}>Set TTL</button>
        ${loaded.ttl >= 0 && html`<button id="persist" onClick=${() => actions.write((ifMatch) => send(session, 'DELETE', `${path}/ttl`, { key: name }, { ifMatch }))}>Remove expiry</button>`}
      </div>`
    }
    ${editorFor(loaded, { name, session, actions })}
    ${
      session.canWrite &&
      html`<div class="danger">
        ${
          confirming
            ? html`<button class="danger" id="confirm-delete" onClick=${() => actions.write((ifMatch) => send(session, 'DELETE', '/store/keys/{key}', { key: name }, { ifMatch })).then((done) => done && props.onDeleted())}>Delete ${name} for good</button>
              <button onClick=${() => setConfirming(false)}>Cancel</button>`
            : html`<button id="delete-key" onClick=${() => setConfirming(true)}>Delete key</button>`
        }
      </div>`
    }
  </section>`;
}
