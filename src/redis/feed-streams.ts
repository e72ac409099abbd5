// On Redis Cluster, the change feed's stream of each master: `#svc:changes:{<tag>}:<prefix>`, in a slot it owns.
import calculateSlot from 'cluster-key-slot';
import type { Cluster } from 'ioredis';

const SLOTS = 16384;

/** The shortest tag (base-36 counter) whose hash slot is `slot`, found once per slot by trying candidates. */
const tags = new Map<number, string>();
export function tagForSlot(slot: number): string {
  let tag = tags.get(slot);
  if (tag !== undefined) return tag;
  // CRC16 spreads candidates evenly: about 16,384 tries on average, once per master per process.
  for (let i = 0; ; i++) {
    const candidate = i.toString(36);
    if (calculateSlot(candidate) === slot) {
      tag = candidate;
      break;
    }
  }
  tags.set(slot, tag);
  return tag;
}

/**
 * Which stream a write's event goes to on a Cluster: the stream of the master that ioredis's slot map says owns
 * the written key's slot, named after the lowest slot that master owns. The script checks that the stream is on
 * its own node before it writes anything (client.ts, `feedHeader`), so a stale map costs a 503, never a write
 * without its event. The reader follows every stream there may be events in (`all`): those of the masters now, those
 * this process named before, and those a SCAN finds (`refresh`) at the start and after a topology change, left by
 * an earlier topology (a resharding that moved a master's lowest slot moves that stream with it).
 */
export class ClusterStreams {
  /** Master address -> its stream, rebuilt when ioredis refreshes its slot map. */
  private byNode = new Map<string, string>();
  private readonly seen = new Set<string>();
  /** The masters' streams, until the slot map is refreshed. */
  private current: string[] | undefined;
  /** `current` as of the last SCAN (`refresh`). */
  private scanned: string | undefined;

  constructor(
    private readonly cluster: Cluster,
    /** The stream's name for a tag (Keyspace.changesIn). */
    private readonly name: (tag: string) => string,
  ) {
    cluster.on('refresh', () => {
      this.byNode = new Map();
      this.current = undefined;
    });
  }

  /**
   * Reloads ioredis's slot map: a script found the stream it was given on another node (it wrote nothing). ioredis
   * reloads it by itself only on a redirection, which a write to a key that did not move never gets.
   */
  reload(): Promise<void> {
    return new Promise((resolve) =>
      this.cluster.refreshSlotsCache(() => {
        this.byNode = new Map();
        this.current = undefined;
        resolve();
      }),
    );
  }

  /** The stream of the master owning `redisKey`'s slot ('' when the slot map is not loaded yet). */
  forKey(redisKey: string): string {
    const node = this.cluster.slots[calculateSlot(redisKey)]?.[0];
    if (node === undefined) return '';
    return this.byNode.get(node) ?? this.build(node);
  }

  /** The streams of every master in the slot map now, every stream named before and every one found by `refresh`. */
  all(): string[] {
    this.masters();
    return [...this.seen].sort();
  }

  private masters(): string[] {
    if (this.current === undefined) {
      const nodes = new Set<string>();
      for (const owners of this.cluster.slots) if (owners?.[0]) nodes.add(owners[0]);
      this.current = [...nodes].map((node) => this.forNode(node)).sort();
    }
    return this.current;
  }

  /**
   * At the start and whenever the masters' streams changed (a master added or removed, a lowest slot moved): a SCAN
   * of every master for the streams of this key prefix, so that one an earlier topology wrote to is read too.
   */
  async refresh(): Promise<void> {
    const masters = this.masters().join(' ');
    if (masters === '' || masters === this.scanned) return;
    // Any tag, the rest (the key prefix) escaped for SCAN's glob.
    const pattern = this.name('\u0000')
      .split('\u0000')
      .map((part) => part.replace(/[*?[\]\\]/g, '\\$&'))
      .join('*');
    const nodes = this.cluster.nodes('master');
    await Promise.all(
      nodes.map(async (node) => {
        const stream = node.scanStream({ match: pattern, type: 'stream', count: 1000 });
        for await (const keys of stream as AsyncIterable<string[]>)
          for (const key of keys) if (this.named(key)) this.seen.add(key);
      }),
    );
    this.scanned = masters;
  }

  /** Whether `key` is a stream this class would name (a tag as tagForSlot makes, this key prefix). */
  private named(key: string): boolean {
    const tag = this.tagOf(key);
    return /^[0-9a-z]{1,6}$/.test(tag) && this.name(tag) === key;
  }

  /** The tag of a stream this class named (the text between its braces). */
  tagOf(stream: string): string {
    return stream.slice(stream.indexOf('{') + 1, stream.indexOf('}'));
  }

  /** The stream of the master at `node` ('host:port' as ioredis names it). */
  forNode(node: string): string {
    return this.byNode.get(node) ?? this.build(node);
  }

  private build(node: string): string {
    const { slots } = this.cluster;
    let lowest = 0;
    while (lowest < SLOTS && slots[lowest]?.[0] !== node) lowest++;
    const stream = this.name(tagForSlot(lowest));
    this.byNode.set(node, stream);
    this.seen.add(stream);
    return stream;
  }
}
