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
 * without its event. The streams a process has named are remembered (`known`): the reader follows them all.
 */
export class ClusterStreams {
  /** Master address -> its stream, rebuilt when ioredis refreshes its slot map. */
  private byNode = new Map<string, string>();
  private readonly seen = new Set<string>();

  constructor(
    private readonly cluster: Cluster,
    /** The stream's name for a tag (Keyspace.changesIn). */
    private readonly name: (tag: string) => string,
  ) {
    cluster.on('refresh', () => {
      this.byNode = new Map();
    });
  }

  /** The stream of the master owning `redisKey`'s slot ('' when the slot map is not loaded yet). */
  forKey(redisKey: string): string {
    const node = this.cluster.slots[calculateSlot(redisKey)]?.[0];
    if (node === undefined) return '';
    return this.byNode.get(node) ?? this.build(node);
  }

  /** The streams of every master in the slot map now, and every stream named before in this process. */
  all(): string[] {
    for (const nodes of new Set(this.cluster.slots.map((n) => n?.[0]))) if (nodes) this.forNode(nodes);
    return [...this.seen].sort();
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
