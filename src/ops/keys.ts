// Operations every type has: existence, TTL, expiry, persistence and deletion of a whole key.
import { ok, present, type RedisType, readOp, type WriteReply, writeOp } from './op';

export interface KeyInput {
  key: string;
}
export interface ExpireInput extends KeyInput {
  ttl: number;
}

/** The outcome `body` when the key existed, else 404 not_found. */
const ifPresent = (key: string, body: Record<string, unknown>) => (reply: WriteReply) => {
  present(reply, key);
  return ok(body);
};

export function keyOps(type: RedisType) {
  return {
    exists: ({ key }: KeyInput) => readOp(type, key, (reply) => ok({ exists: reply !== null })),
    ttl: ({ key }: KeyInput) => readOp(type, key, (reply) => ok({ ttl: present(reply, key)[1] })),
    delete: ({ key }: KeyInput) =>
      writeOp(type, key, {}, (reply) => ok({ success: true, deleted: reply?.[1] === 1 }), 'DEL'),
    expire: ({ key, ttl }: ExpireInput) =>
      writeOp(type, key, { condition: 'present' }, ifPresent(key, { success: true, ttl }), 'EXPIRE', ttl),
    persist: ({ key }: KeyInput) =>
      writeOp(type, key, { condition: 'present' }, ifPresent(key, { success: true, ttl: -1 }), 'PERSIST'),
  };
}
