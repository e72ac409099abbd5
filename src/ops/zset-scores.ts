// Sorted-set scores between JSON and Redis: numbers, and the strings "+inf" / "-inf" that JSON cannot hold.
import type { ReadReply } from './op';

/** A score as the API reads and writes it: a finite JSON number, or "+inf" / "-inf". */
export type Score = number | '+inf' | '-inf';
/** A score range bound: a score, or a score string, "(" before it for an exclusive bound ("(5", "(+inf"). */
export type ScoreBound = number | string;

export interface Scored {
  member: string;
  score: Score;
}

/** A score as Redis's arguments take it; String() of a double is exact (17 significant digits when needed). */
export const redisScore = (score: Score | ScoreBound): string => String(score);

/** Redis answers scores as strings ("1.5", "inf", "-inf"); %.17g round-trips through a double exactly. */
export function scoreOf(reply: string): Score {
  if (reply === 'inf' || reply === '+inf') return '+inf';
  if (reply === '-inf') return '-inf';
  return Number(reply);
}

/** WITHSCORES's flat [member, score, member, score, ...] as [{member, score}, ...], in Redis's order. */
export function scored(flat: readonly string[]): Scored[] {
  const out: Scored[] = [];
  for (let i = 0; i < flat.length; i += 2)
    out.push({ member: flat[i] as string, score: scoreOf(flat[i + 1] as string) });
  return out;
}

/** A page read with one element more than `limit`: the page, and whether anything follows it. */
export function page(reply: ReadReply, limit: number, offset: number) {
  const [flat, ttl] = reply as [string[], number];
  const members = scored(flat);
  const more = members.length > limit;
  if (more) members.length = limit;
  return { members, offset, more, ttl };
}
