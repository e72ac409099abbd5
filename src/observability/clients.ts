// The HTTP clients seen by this instance: a bounded map, least recently seen dropped first.
import { createHash } from 'node:crypto';

export interface ClientRecord {
  id: string;
  ip: string;
  user_agent: string;
  connected_at: string;
  last_activity: string;
  requests_count: number;
}

interface Entry {
  id: string;
  ip: string;
  userAgent: string;
  firstSeen: number;
  lastSeen: number;
  count: number;
}

// A user agent is remembered up to this length, so a bounded list stays small in memory.
const MAX_USER_AGENT = 256;

export class Clients {
  // A Map iterates in insertion order; re-inserting on every request keeps the least recent first.
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly max: number) {}

  /** Counts one request of the client identified by its IP, user agent and principal id (when authenticated). */
  seen(ip: string, userAgent: string, principal: string | undefined, now = Date.now()): void {
    const ua = userAgent.length > MAX_USER_AGENT ? userAgent.slice(0, MAX_USER_AGENT) : userAgent;
    const key = principal === undefined ? `${ip}\n${ua}` : `${ip}\n${ua}\n${principal}`;
    let entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
    } else {
      if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
      const id = createHash('sha256').update(key).digest('hex').slice(0, 12);
      entry = { id, ip, userAgent: ua, firstSeen: now, lastSeen: now, count: 0 };
    }
    entry.lastSeen = now;
    entry.count++;
    this.entries.set(key, entry);
  }

  /** Most recently seen first. */
  list(): ClientRecord[] {
    return [...this.entries.values()].reverse().map((e) => ({
      id: e.id,
      ip: e.ip,
      user_agent: e.userAgent,
      connected_at: new Date(e.firstSeen).toISOString(),
      last_activity: new Date(e.lastSeen).toISOString(),
      requests_count: e.count,
    }));
  }
}
