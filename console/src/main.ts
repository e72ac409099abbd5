// The console's shell: sign in, then the keys browser, the live change feed and (admin keys) the service's charts.
import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { GatewayError } from '../../clients/typescript/src/index';
import { ChangesView, useFeed } from './feed';
import { KeysView } from './keys';
import { LocksView } from './locks';
import { QueuesView } from './queues';
import { ServiceView } from './service';
import { describe, forget, type Session, savedToken, signIn } from './session';

type Tab = 'keys' | 'changes' | 'queues' | 'locks' | 'service';

function SignIn({ onSession, problem }: { onSession: (s: Session) => void; problem: string }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState(problem);
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      onSession(await signIn(token.trim()));
    } catch (err) {
      setError(describe(err));
    }
  };
  return html`<section class="panel signin">
    <h1>Redis HTTP Gateway</h1>
    <form onSubmit=${submit}>
      <label for="api-key">API key</label>
      <input id="api-key" type="password" autocomplete="off" value=${token}
        onInput=${(e: Event) => setToken((e.target as HTMLInputElement).value)} />
      <button type="submit" id="sign-in">Sign in</button>
    </form>
    <p class="muted">The key stays in this browser tab only (sessionStorage) and is sent to this service alone.</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
  </section>`;
}

function Console({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const [tab, setTab] = useState<Tab>('keys');
  const feed = useFeed(session);
  const { who } = session;
  const tabs: [Tab, string][] = [
    ['keys', 'Keys'],
    ['changes', 'Changes'],
    ['queues', 'Queues'],
    ['locks', 'Locks'],
  ];
  if (session.isAdmin) tabs.push(['service', 'Service']);
  return html`<header class="bar">
      <strong>Redis HTTP Gateway</strong>
      <nav>${tabs.map(
        ([id, label]) =>
          html`<button class=${tab === id ? 'tab active' : 'tab'} id=${`tab-${id}`} onClick=${() => setTab(id)}>${label}</button>`,
      )}</nav>
      <span class="who" id="who">${who.id} · ${who.permissions.join(', ')}${who.prefix ? ` · keys ${who.prefix}*` : ''}</span>
      <button class="link" id="sign-out" onClick=${onSignOut}>Sign out</button>
    </header>
    ${tab === 'keys' && html`<${KeysView} session=${session} feed=${feed} />`}
    ${tab === 'changes' && html`<${ChangesView} feed=${feed} />`}
    ${tab === 'queues' && html`<${QueuesView} session=${session} />`}
    ${tab === 'locks' && html`<${LocksView} session=${session} />`}
    ${tab === 'service' && html`<${ServiceView} session=${session} />`}`;
}

function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [checking, setChecking] = useState(true);
  const [problem, setProblem] = useState('');
  useEffect(() => {
    // A key from earlier in this tab, else none: with no credentials configured, a loopback browser needs none.
    signIn(savedToken())
      .then(setSession)
      .catch((err: unknown) => {
        if (!(err instanceof GatewayError && err.status === 401)) setProblem(describe(err));
        forget();
      })
      .finally(() => setChecking(false));
  }, []);
  if (checking) return html`<p class="muted">Connecting…</p>`;
  if (!session) return html`<${SignIn} onSession=${setSession} problem=${problem} />`;
  const signOut = () => {
    forget();
    setSession(null);
  };
  return html`<${Console} session=${session} onSignOut=${signOut} />`;
}

render(html`<${App} />`, document.getElementById('app') as HTMLElement);
