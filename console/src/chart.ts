// A small SVG line chart (no chart library: a few polylines, colours from app.css classes, no inline style).
import { html } from 'htm/preact';

export interface Series {
  name: string;
  values: (number | null)[];
}

const W = 460;
const H = 120;

/** The polyline points of one series scaled to `max` over `count` samples; gaps (null) are skipped. */
function points(values: (number | null)[], max: number, count: number): string {
  const step = count > 1 ? W / (count - 1) : W;
  return values
    .map((v, i) => (v === null ? '' : `${(i * step).toFixed(1)},${(H - (v / max) * H).toFixed(1)}`))
    .filter(Boolean)
    .join(' ');
}

export function Chart(props: {
  title: string;
  series: Series[];
  format: (v: number) => string;
  id?: string;
}) {
  const count = Math.max(0, ...props.series.map((s) => s.values.length));
  const max = Math.max(1e-9, ...props.series.flatMap((s) => s.values.filter((v): v is number => v !== null)));
  const last = (s: Series) => [...s.values].reverse().find((v) => v !== null);
  return html`<figure class="chart" id=${props.id}>
    <figcaption>${props.title} <span class="muted">(max ${props.format(max)})</span></figcaption>
    <svg viewBox=${`0 0 ${W} ${H}`} width=${W} height=${H} role="img" aria-label=${props.title}>
      <line class="axis" x1="0" y1=${H} x2=${W} y2=${H} />
      ${props.series.map((s, i) => html`<polyline class=${`line c${i % 8}`} points=${points(s.values, max, count)} />`)}
    </svg>
    <ul class="legend">${props.series.map(
      (s, i) =>
        html`<li><span class=${`swatch c${i % 8}`}></span>${s.name}: ${last(s) === undefined ? '—' : props.format(last(s) as number)}</li>`,
    )}</ul>
  </figure>`;
}
