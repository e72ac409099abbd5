// The change feed of this tab: one subscription (Server-Sent Events over fetch) shared by the views.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import type { ChangeEvent } from '../../clients/typescript/src/index';
import { GatewayError } from '../../clients/typescript/src/index';
import { describe, type Session } from './session';

export type FeedStatus = 'connecting' | 'live' | 'reconnecting' | 'off' | 'failed';

export interface Feed {
  status: FeedStatus;
  detail: string;
  /** Newest first, at most MAX_EVENTS. */
  events: ChangeEvent[];
}

const MAX_EVENTS = 200;

export function useFeed(session: Session): Feed {
  const [feed, setFeed] = useState<Feed>({ status: 'connecting', detail: '', events: [] });
  useEffect(() => {
    const sub = session.gw.changes.subscribe({
      onOpen: () => setFeed((f) => ({ ...f, status: 'live', detail: '' })),
      onEvent: (event) => setFeed((f) => ({ ...f, events: [event, ...f.events].slice(0, MAX_EVENTS) })),
      onError: (err) => setFeed((f) => ({ ...f, status: 'reconnecting', detail: describe(err) })),
    });
    sub.done.catch((err: unknown) => {
      const off = err instanceof GatewayError && err.status === 404;
      setFeed((f) => ({ ...f, status: off ? 'off' : 'failed', detail: describe(err) }));
    });
    return () => sub.close();
  }, [session]);
  return feed;
}

const time = (iso: string) => new Date(iso).toLocaleTimeString();

export function ChangesView({ feed }: { feed: Feed }) {
  if (feed.status === 'off')
    return html`<section class="panel"><h2>Changes</h2>
      <p class="muted">The change feed is off on this service (<code>SVC_CHANGES_ENABLED=true</code> turns it on).</p>
    </section>`;
  return html`<section class="panel">
    <h2>Changes <span class=${`status status-${feed.status}`} id="feed-status">${feed.status}</span></h2>
    ${feed.detail && html`<p class="muted">${feed.detail}</p>`}
    <p class="muted">Every write as it happens (never the values), newest first.</p>
    <table class="grid" id="changes">
      <thead><tr><th>Time</th><th>Operation</th><th>Type</th><th>Key</th></tr></thead>
      <tbody>
        ${feed.events.map(
          (e) =>
            html`<tr key=${e.id}><td>${time(e.time)}</td><td>${e.op}</td><td>${e.type}</td><td class="key">${e.key}</td></tr>`,
        )}
      </tbody>
    </table>
    ${feed.events.length === 0 && html`<p class="muted">No change yet.</p>`}
  </section>`;
}
