// Admin questions between the workers of one instance (SVC_WORKERS > 1): a worker asks the others via the primary.
//
// Only admin requests (stats, metrics, clients, reload) use this; the data path never sends a message.
// The primary is a relay: it passes the question to every other listening worker and hands their answers
// back to the asker, who merges them with its own figures (admin/aggregate.ts).
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from './observability/logger';

export type Topic = 'stats' | 'metrics' | 'clients' | 'reload';
export type Answer = { ok: true; value: unknown } | { ok: false; error: string };
export type Answerers = Record<Topic, () => Promise<unknown>>;

/** The other workers of this instance, as one worker sees them. */
export interface Peers {
  /** Asks every other worker; resolves with the answers that came in time (never rejects). */
  ask(topic: Topic): Promise<Answer[]>;
  /** Sets how this worker answers the others' questions. */
  answerWith(answerers: Answerers): void;
}

/** How long the primary waits for the other workers before it hands back the answers it has. */
const ANSWER_TIMEOUT_MS = 5_000;

type Message =
  | { svc: 'ask'; id: number; topic: Topic } // worker -> primary
  | { svc: 'question'; id: number; topic: Topic } // primary -> each other worker
  | { svc: 'reply'; id: number; answer: Answer } // worker -> primary
  | { svc: 'answers'; id: number; answers: Answer[] }; // primary -> the asking worker

const isMessage = (m: unknown): m is Message =>
  typeof m === 'object' && m !== null && typeof (m as { svc?: unknown }).svc === 'string';

/** Primary side: relays each worker's question to `others(asker)` and their answers back. */
export function relayQuestions(others: (asker: Worker) => Worker[], logger: Logger): void {
  let next = 0;
  const pending = new Map<number, (answer: Answer) => void>();
  cluster.on('message', (from, message: unknown) => {
    if (!isMessage(message)) return;
    if (message.svc === 'reply') return pending.get(message.id)?.(message.answer);
    if (message.svc !== 'ask') return;
    const asked = others(from);
    const answers: Answer[] = [];
    const id = next++;
    const done = () => {
      clearTimeout(timer);
      pending.delete(id);
      if (answers.length < asked.length)
        logger.warn('workers did not answer in time', {
          topic: message.topic,
          missing: asked.length - answers.length,
        });
      if (from.isConnected()) from.send({ svc: 'answers', id: message.id, answers } satisfies Message);
    };
    const timer = setTimeout(done, ANSWER_TIMEOUT_MS);
    pending.set(id, (answer) => {
      answers.push(answer);
      if (answers.length === asked.length) done();
    });
    for (const worker of asked) worker.send({ svc: 'question', id, topic: message.topic } satisfies Message);
    if (asked.length === 0) done();
  });
}

/** Worker side: the link to the other workers through the primary. */
export function joinPeers(): Peers {
  let next = 0;
  let answerers: Answerers | undefined;
  const waiting = new Map<number, (answers: Answer[]) => void>();
  const send = (message: Message) => process.connected && process.send?.(message);
  // Without the primary no answer can come: pending questions end with what this worker knows itself.
  process.on('disconnect', () => {
    for (const resolve of waiting.values()) resolve([]);
    waiting.clear();
  });
  process.on('message', (message: unknown) => {
    if (!isMessage(message)) return;
    if (message.svc === 'answers') {
      waiting.get(message.id)?.(message.answers);
      waiting.delete(message.id);
    } else if (message.svc === 'question') {
      const answer = answerers?.[message.topic] ?? (() => Promise.reject(new Error('not ready')));
      void answer()
        .then(
          (value): Answer => ({ ok: true, value }),
          (err: Error): Answer => ({ ok: false, error: err.message }),
        )
        .then((result) => send({ svc: 'reply', id: message.id, answer: result }));
    }
  });
  return {
    ask(topic) {
      if (!process.connected) return Promise.resolve([]);
      return new Promise((resolve) => {
        const id = next++;
        waiting.set(id, resolve);
        send({ svc: 'ask', id, topic });
      });
    },
    answerWith(given) {
      answerers = given;
    },
  };
}
