// docs/configuration.md's settings table, written from the settings table (src/settings.ts).
import { SETTING_LIST } from '../../src/settings';

export const TABLE_START =
  '<!-- settings table: generated from src/settings.ts by `npm run docs:settings` -->';
export const TABLE_END = '<!-- end of settings table -->';

function defaultCell(schema: { default?: unknown }, defaultFrom?: string): string {
  if (defaultFrom) return `\`${defaultFrom}\``;
  if (schema.default === undefined) return 'unset';
  if (schema.default === '') return 'empty';
  return `\`${String(schema.default)}\``;
}

/** The Markdown table, columns padded so that the page reads as well as text as when rendered. */
export function settingsTable(): string {
  const rows = SETTING_LIST.map(([name, s]) => [
    `\`${name}\``,
    defaultCell(s.schema, s.defaultFrom),
    s.live ? 'live' : 'restart',
    s.description,
  ]);
  const header = ['Variable', 'Default', 'On reload', 'Meaning'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  const rule = `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** `page` with the text between the markers replaced by the current table. */
export function withSettingsTable(page: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error('docs/configuration.md: settings table markers not found');
  return `${page.slice(0, start + TABLE_START.length)}\n${settingsTable()}\n${page.slice(end)}`;
}
