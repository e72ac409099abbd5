// The Queues tab: each queue's depth, in flight, delayed and dead letters; peek ready and dead messages; redrive.
import { html } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Gateway, QueueMessage, QueueState } from '../../clients/typescript/src/index';
import { describe, type Session } from './session';

type Info = Awaited<ReturnType<Gateway['queues']['get']>>;

const age = (seconds: number | null) => (seconds === null ? '–' : `${seconds.toFixed(1)} s`);

function Messages({ messages, state }: { messages: QueueMessage[]; state: QueueState }) {
  if (messages.length === 0) return html`<p class="muted">No ${state.replace('_', ' ')} message.</p>`;
  return html`<table class="grid" id=${`queue-${state}`}>
    <thead><tr><th>Id</th><th>Body</th><th>Deliveries</th><th>${state === 'dead' ? 'Last error' : 'Group'}</th></tr></thead>
    <tbody>${messages.map(
      (m) => html`<tr key=${m.id}><td>${m.id}</td><td class="key">${m.body.slice(0, 200)}</td>
        <td>${m.delivery_count}</td><td>${state === 'dead' ? (m.last_error ?? '') : (m.group ?? '')}</td></tr>`,
    )}</tbody>
  </table>`;
}

function QueueDetail({ session, name, onChange }: { session: Session; name: string; onChange: () => void }) {
  const [state, setState] = useState<QueueState>('ready');
  const [messages, setMessages] = useState<QueueMessage[]>([]);
  const [error, setError] = useState('');
  const load = useCallback(() => {
    session.gw.queues.peek(name, state, 50).then(setMessages, (err: unknown) => setError(describe(err)));
  }, [session, name, state]);
  useEffect(load, [load]);
  const redrive = async () => {
    await session.gw.queues.redrive(name).catch((err: unknown) => setError(describe(err)));
    load();
    onChange();
  };
  const states: QueueState[] = ['ready', 'delayed', 'in_flight', 'dead'];
  return html`<div id="queue-detail" data-queue=${name}>
    <h3>${name}</h3>
    <nav>${states.map(
      (s) =>
        html`<button class=${s === state ? 'tab active' : 'tab'} id=${`peek-${s}`} onClick=${() => setState(s)}>${s.replace('_', ' ')}</button>`,
    )}</nav>
    ${state === 'dead' && session.canWrite && html`<button id="redrive" onClick=${redrive}>Redrive all</button>`}
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <${Messages} messages=${messages} state=${state} />
  </div>`;
}

export function QueuesView({ session }: { session: Session }) {
  const [queues, setQueues] = useState<Info[]>([]);
  const [open, setOpen] = useState<string | null>(null);
  const [error, setError] = useState('');
  const load = useCallback(async () => {
    try {
      const names = await session.gw.queues.list(session.who.prefix ?? undefined);
      setQueues(await Promise.all(names.map((n) => session.gw.queues.get(n))));
      setError('');
    } catch (err) {
      setError(describe(err));
    }
  }, [session]);
  useEffect(() => {
    void load();
  }, [load]);
  return html`<section class="panel">
    <h2>Queues <button class="link" id="queues-refresh" onClick=${load}>Refresh</button></h2>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <table class="grid" id="queues">
      <thead><tr><th>Queue</th><th>Ready</th><th>In flight</th><th>Delayed</th><th>Waiting</th><th>Dead</th><th>Oldest ready</th></tr></thead>
      <tbody>${queues.map(
        ({ queue, stats: s }) => html`<tr key=${queue}>
          <td><button class="key link" data-queue=${queue} onClick=${() => setOpen(queue)}>${queue}</button></td>
          <td>${s.ready}</td><td>${s.in_flight}</td><td>${s.delayed}</td><td>${s.waiting}</td><td>${s.dead}</td>
          <td>${age(s.oldest_ready_age ?? null)}</td></tr>`,
      )}</tbody>
    </table>
    ${queues.length === 0 && !error && html`<p class="muted">No queue yet (create one with PUT /store/queues/{queue}).</p>`}
    ${open && html`<${QueueDetail} key=${open} session=${session} name=${open} onChange=${load} />`}
  </section>`;
}
