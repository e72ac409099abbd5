// Generates src/upstash/commands.json, the command table /upstash ships with, from Redis's and Valkey's own
// src/commands/*.json (the files their COMMAND reply is built from), so that key positions never depend on a
// server's COMMAND (Memorystore refuses it, Upstash answers it empty).
//
//   node scripts/command-table.mjs <redis checkout>/src/commands <valkey checkout>/src/commands
//
// Redis's entry wins where both have a command; Valkey adds the ones Redis lacks. Each command is
// [arity, flags, categories, key specs, subcommands?]: flags and ACL categories as COMMAND reports them (lower case;
// categories with '@', those COMMAND derives from the flags included), key specs in short form:
//   begin  'i<pos>' | 'k<startfrom>:<keyword>' | 'u'     find  'r<lastkey>,<step>,<limit>' | 'n<keynumidx>,<firstkey>,<step>' | 'u'
// joined as '<begin>/<find>', with '!' appended when Redis flags the spec INCOMPLETE.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const OUT = path.join(import.meta.dirname, '..', 'src', 'upstash', 'commands.json');

/** ACL categories COMMAND adds from a command's flags (Redis's setImplicitACLCategories). */
function categories(flags, explicit) {
  const out = new Set(explicit.map((c) => `@${c.toLowerCase()}`));
  if (flags.includes('write')) out.add('@write');
  if (flags.includes('readonly') && !out.has('@scripting')) out.add('@read');
  if (flags.includes('admin')) out.add('@admin').add('@dangerous');
  if (flags.includes('pubsub')) out.add('@pubsub');
  if (flags.includes('fast')) out.add('@fast');
  if (flags.includes('blocking')) out.add('@blocking');
  if (!out.has('@fast')) out.add('@slow');
  return [...out].sort().join(' ');
}

function keySpec(spec) {
  const { begin_search: b, find_keys: f } = spec;
  const begin = b.index
    ? `i${b.index.pos}`
    : b.keyword
      ? `k${b.keyword.startfrom}:${b.keyword.keyword}`
      : 'u';
  const find = f.range
    ? `r${f.range.lastkey},${f.range.step},${f.range.limit}`
    : f.keynum
      ? `n${f.keynum.keynumidx},${f.keynum.firstkey},${f.keynum.step}`
      : 'u';
  return `${begin}/${find}${(spec.flags ?? []).includes('INCOMPLETE') ? '!' : ''}`;
}

function entry(doc) {
  const flags = (doc.command_flags ?? []).map((f) => f.toLowerCase());
  const specs = doc.key_specs ?? [];
  // COMMAND reports movablekeys when the keys cannot be found from the first key spec's fixed positions.
  if (specs.some((s) => !s.begin_search.index || !s.find_keys.range) || doc.get_keys_function)
    flags.push('movablekeys');
  return [doc.arity, flags.sort().join(' '), categories(flags, doc.acl_categories ?? []), specs.map(keySpec)];
}

/** name -> entry, subcommands under their container as `container|sub`. */
function read(dir) {
  const table = {};
  const subs = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const json = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    for (const [name, doc] of Object.entries(json)) {
      if (doc.container) subs.push([doc.container.toLowerCase(), name.toLowerCase(), doc]);
      else table[name.toLowerCase()] = entry(doc);
    }
  }
  for (const [container, name, doc] of subs) {
    const top = table[container];
    if (!top) continue;
    top[4] ??= {};
    top[4][`${container}|${name}`] = entry(doc);
  }
  return table;
}

const [redisDir, valkeyDir] = process.argv.slice(2);
if (!redisDir || !valkeyDir) {
  process.stderr.write('usage: node scripts/command-table.mjs <redis>/src/commands <valkey>/src/commands\n');
  process.exit(2);
}
const table = read(redisDir);
for (const [name, valkey] of Object.entries(read(valkeyDir))) {
  const redis = table[name];
  if (!redis) table[name] = valkey;
  else if (valkey[4]) redis[4] = { ...valkey[4], ...redis[4] };
}
// Specs Redis 8 flags INCOMPLETE that older sources do not: a repeated keyword (`STORE a STORE b`: the last wins)
// or a key named like the keyword. The table stays as cautious as the newest server, whichever sources made it;
// src/upstash/plan.ts walks these commands' arguments as Redis's own *GetKeys functions do.
const INCOMPLETE_SINCE_REDIS_8 = {
  georadius: ['k6:STORE/', 'k6:STOREDIST/'],
  georadiusbymember: ['k5:STORE/', 'k5:STOREDIST/'],
  xread: ['k1:STREAMS/'],
  xreadgroup: ['k4:STREAMS/'],
};
for (const [name, begins] of Object.entries(INCOMPLETE_SINCE_REDIS_8)) {
  const specs = table[name]?.[3] ?? [];
  specs.forEach((spec, i) => {
    if (begins.some((b) => spec.startsWith(b)) && !spec.endsWith('!')) specs[i] = `${spec}!`;
  });
}
const sorted = Object.fromEntries(Object.entries(table).sort(([a], [b]) => a.localeCompare(b)));
const lines = Object.entries(sorted).map(([name, e]) => `${JSON.stringify(name)}:${JSON.stringify(e)}`);
writeFileSync(OUT, `{\n${lines.join(',\n')}\n}\n`);
// In the repository's format, so that `npm run lint` passes on a fresh table.
execFileSync('npx', ['biome', 'format', '--write', OUT], { stdio: 'ignore' });
process.stdout.write(`${lines.length} commands -> ${path.relative(process.cwd(), OUT)}\n`);
