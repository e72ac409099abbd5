// The value of a key by type: string, hash fields, set members, list items, sorted-set members with scores. A
// credential without `write` sees the value only.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { Actions } from './key-detail';
import { send } from './raw';
import type { Session } from './session';

export interface Loaded {
  type: string;
  ttl: number;
  etag: string | undefined;
  /** Counts the reads of this tab: each read's drafts start afresh. */
  version: number;
  /** The family's whole-key read (`{value}`, `{fields}`, `{members}`, `{values, length}`, `{members, more}`). */
  // biome-ignore lint/suspicious/noExplicitAny: one of five families' answers, told apart by `type`
  value: any;
}

interface Props {
  name: string;
  session: Session;
  actions: Actions;
}

const text = (e: Event) => (e.target as HTMLInputElement).value;
/** A score as typed: a number, or `+inf` / `-inf`. */
const score = (s: string) => (s === '+inf' || s === '-inf' ? s : Number(s));

/** A text input whose draft is kept until saved; typing marks the key as being edited. */
function useDraft(initial: string, actions: Actions): [string, (e: Event) => void] {
  const [draft, setDraft] = useState(initial);
  return [
    draft,
    (e: Event) => {
      setDraft(text(e));
      actions.editing();
    },
  ];
}

function StringEditor({ value, name, session, actions }: Props & { value: string }) {
  const [draft, onInput] = useDraft(value, actions);
  if (!session.canWrite) return html`<pre class="value" id="string-value">${value}</pre>`;
  return html`<textarea id="string-value" rows="6" value=${draft} onInput=${onInput}></textarea>
    <button id="save-string" onClick=${() => actions.write((ifMatch) => session.gw.strings.set(name, draft, { ifMatch }))}>Save</button>`;
}

function FieldRow({ field, value, name, session, actions }: Props & { field: string; value: string }) {
  const [draft, onInput] = useDraft(value, actions);
  if (!session.canWrite)
    return html`<tr><td class="key">${field}</td><td class="value" data-field=${field}>${value}</td></tr>`;
  return html`<tr>
    <td class="key">${field}</td>
    <td><input class="field-value" data-field=${field} value=${draft} onInput=${onInput} /></td>
    <td><button data-save-field=${field} onClick=${() => actions.write((ifMatch) => session.gw.hashes.setField(name, field, draft, { ifMatch }))}>Save</button>
      <button data-delete-field=${field} onClick=${() => actions.write((ifMatch) => session.gw.hashes.deleteField(name, field, { ifMatch }))}>Delete</button></td>
  </tr>`;
}

/** Two inputs and a button that adds what they hold. */
function AddRow(props: {
  ids: [string, string, string];
  labels: [string, string];
  add: (a: string, b: string) => void;
  actions: Actions;
}) {
  const [a, setA] = useDraft('', props.actions);
  const [b, setB] = useDraft('', props.actions);
  const [ida, idb, idButton] = props.ids;
  return html`<div class="row">
    <input id=${ida} placeholder=${props.labels[0]} value=${a} onInput=${setA} />
    ${idb && html`<input id=${idb} placeholder=${props.labels[1]} value=${b} onInput=${setB} />`}
    <button id=${idButton} onClick=${() => props.add(a, b)}>Add</button>
  </div>`;
}

/** Said under a hash or set read as its first page (more than 1,000 elements). */
const partial = (complete: boolean | undefined) =>
  complete === false && html`<p class="muted" id="partial">A large key: the first page is shown.</p>`;

function HashEditor(props: Props & { fields: Record<string, string>; complete?: boolean }) {
  const { name, session, actions } = props;
  return html`${partial(props.complete)}<table class="grid" id="hash-fields"><thead><tr><th>Field</th><th>Value</th>${session.canWrite && html`<th></th>`}</tr></thead>
    <tbody>${Object.entries(props.fields).map(([field, value]) => html`<${FieldRow} key=${field} field=${field} value=${value} ...${props} />`)}</tbody></table>
    ${
      session.canWrite &&
      html`<${AddRow} actions=${actions} ids=${['new-field', 'new-field-value', 'add-field']} labels=${['field', 'value']}
      add=${(f: string, v: string) => actions.write((ifMatch) => session.gw.hashes.setField(name, f, v, { ifMatch }))} />`
    }`;
}

function SetEditor(props: Props & { members: string[]; complete?: boolean }) {
  const { name, session, actions } = props;
  return html`${partial(props.complete)}<ul class="members" id="set-members">${[...props.members].sort().map(
    (m) => html`<li key=${m}><span class="value">${m}</span>
      ${session.canWrite && html`<button data-remove-member=${m} onClick=${() => actions.write((ifMatch) => session.gw.sets.remove(name, m, { ifMatch }))}>Remove</button>`}</li>`,
  )}</ul>
    ${
      session.canWrite &&
      html`<${AddRow} actions=${actions} ids=${['new-member', '', 'add-member']} labels=${['member', '']}
      add=${(m: string) => actions.write((ifMatch) => session.gw.sets.add(name, [m], { ifMatch }))} />`
    }`;
}

function ItemRow({ index, value, name, session, actions }: Props & { index: number; value: string }) {
  const [draft, onInput] = useDraft(value, actions);
  const save = (ifMatch: string | undefined) =>
    send(
      session,
      'POST',
      '/store/list/{key}/index/{index}',
      { key: name, index },
      { body: { value: draft }, ifMatch },
    );
  if (!session.canWrite) return html`<tr><td>${index}</td><td class="value">${value}</td></tr>`;
  return html`<tr><td>${index}</td><td><input class="item-value" data-index=${index} value=${draft} onInput=${onInput} /></td>
    <td><button data-save-index=${index} onClick=${() => actions.write(save)}>Save</button></td></tr>`;
}

function ListEditor(props: Props & { values: string[]; length: number }) {
  const { name, session, actions } = props;
  return html`<p class="muted">${props.length} item${props.length === 1 ? '' : 's'}${props.length > props.values.length ? `, the first ${props.values.length} shown` : ''}</p>
    <table class="grid" id="list-items"><tbody>${props.values.map((v, i) => html`<${ItemRow} key=${i} index=${i} value=${v} ...${props} />`)}</tbody></table>
    ${
      session.canWrite &&
      html`<${AddRow} actions=${actions} ids=${['push-value', '', 'push']} labels=${['value to push at the tail', '']}
      add=${(v: string) => actions.write((ifMatch) => session.gw.lists.push(name, [v], { ifMatch }))} />
      <button id="pop-left" onClick=${() => actions.write((ifMatch) => session.gw.lists.pop(name, { ifMatch }))}>Pop the head</button>`
    }`;
}

function ScoreRow({ member, value, name, session, actions }: Props & { member: string; value: string }) {
  const [draft, onInput] = useDraft(value, actions);
  const save = (ifMatch: string | undefined) =>
    send(
      session,
      'POST',
      '/store/zset/{key}/member/{member}',
      { key: name, member },
      { body: { score: score(draft) }, ifMatch },
    );
  const remove = (ifMatch: string | undefined) =>
    send(session, 'DELETE', '/store/zset/{key}/member/{member}', { key: name, member }, { ifMatch });
  if (!session.canWrite) return html`<tr><td class="key">${member}</td><td class="value">${value}</td></tr>`;
  return html`<tr><td class="key">${member}</td><td><input class="score" data-member=${member} value=${draft} onInput=${onInput} /></td>
    <td><button data-save-member=${member} onClick=${() => actions.write(save)}>Save</button>
      <button data-remove-member=${member} onClick=${() => actions.write(remove)}>Remove</button></td></tr>`;
}

function ZsetEditor(props: Props & { members: { member: string; score: number | string }[]; more: boolean }) {
  const { name, session, actions } = props;
  return html`<table class="grid" id="zset-members"><thead><tr><th>Member</th><th>Score</th></tr></thead>
    <tbody>${props.members.map((m) => html`<${ScoreRow} key=${m.member} member=${m.member} value=${String(m.score)} ...${props} />`)}</tbody></table>
    ${props.more && html`<p class="muted">The lowest 200 shown.</p>`}
    ${
      session.canWrite &&
      html`<${AddRow} actions=${actions} ids=${['new-zmember', 'new-zscore', 'add-zmember']} labels=${['member', 'score']}
      add=${(m: string, s: string) => actions.write((ifMatch) => session.gw.zsets.add(name, { [m]: score(s) }, { ifMatch }))} />`
    }`;
}

export function editorFor(loaded: Loaded, props: Props) {
  // Keyed by the content: a reload that found another value starts the drafts afresh from it, one that found the
  // same (after this tab's own write, whose change event comes back) keeps what is being typed.
  const k = loaded.etag ?? loaded.version;
  const v = loaded.value;
  switch (loaded.type) {
    case 'string':
      return html`<${StringEditor} key=${k} value=${v.value} ...${props} />`;
    case 'hash':
      return html`<${HashEditor} key=${k} fields=${v.fields} complete=${v.complete} ...${props} />`;
    case 'set':
      return html`<${SetEditor} key=${k} members=${v.members} complete=${v.complete} ...${props} />`;
    case 'list':
      return html`<${ListEditor} key=${k} values=${v.values} length=${v.length} ...${props} />`;
    case 'zset':
      return html`<${ZsetEditor} key=${k} members=${v.members} more=${v.more} ...${props} />`;
    default:
      return html`<p class="muted">A ${loaded.type}: the console shows strings, hashes, sets, lists and sorted sets.</p>`;
  }
}
