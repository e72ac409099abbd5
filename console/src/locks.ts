// The locks held now (GET /store/locks): name, fencing token and TTL left, refreshed every 2 s; never owner tokens.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import type { HeldLock } from '../../clients/typescript/src/index';
import { describe, type Session } from './session';

const EVERY_MS = 2000;

export function LocksView({ session }: { session: Session }) {
  const [locks, setLocks] = useState<HeldLock[]>([]);
  const [complete, setComplete] = useState(true);
  const [error, setError] = useState('');
  useEffect(() => {
    let stopped = false;
    const load = () =>
      session.gw.locks
        .list({ prefix: session.who.prefix ?? '', limit: 200 })
        .then((page) => {
          if (stopped) return;
          setLocks([...page.locks].sort((a, b) => a.name.localeCompare(b.name)));
          setComplete(page.complete);
          setError('');
        })
        .catch((err: unknown) => !stopped && setError(describe(err)));
    void load();
    const timer = setInterval(load, EVERY_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [session]);
  return html`<section class="panel" id="locks">
    <h2>Held locks</h2>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${locks.length === 0 && !error && html`<p class="muted" id="no-locks">No lock is held.</p>`}
    ${
      locks.length > 0 &&
      html`<table class="locks">
      <thead><tr><th>Lock</th><th>Fencing token</th><th>TTL left</th></tr></thead>
      <tbody>${locks.map(
        (l) =>
          html`<tr class="lock" data-name=${l.name}><td>${l.name}</td><td>${l.fence}</td><td>${(l.ttl_ms / 1000).toFixed(1)} s</td></tr>`,
      )}</tbody>
    </table>`
    }
    ${!complete && html`<p class="muted">More locks may be held than shown (the walk is bounded).</p>`}
  </section>`;
}
