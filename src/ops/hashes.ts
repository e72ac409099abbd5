// Hash operations: each says which commands it sends and what their replies mean.
import { ApiError, noFieldExpiry } from '../errors';
import { fieldExpiry } from '../redis/capabilities';
import { type IncrInput, incrOp } from './counters';
import { type KeyInput, keyOps } from './keys';
import {
  type CollectionWrite,
  checkValueSize,
  collectionWrite,
  created,
  elementOp,
  elementWriteOp,
  type Limits,
  ok,
  present,
  type ReadReply,
  readOp,
  valued,
  writeOp,
} from './op';
import { type PageInput, paged, pageOp } from './pages';

/** `ifAbsent` is `If-None-Match: *`: write only when the key does not exist yet. */
export interface HashSetInput extends KeyInput, CollectionWrite {
  fields: Record<string, string>;
}
export interface FieldInput extends KeyInput {
  field: string;
}
export interface FieldSetInput extends FieldInput {
  value: string;
  /** Seconds until the field expires (HEXPIRE, Redis 8 / Valkey 9); refused on servers without it. */
  ttl?: number;
  /** `If-None-Match: *`: write only when the field does not exist yet. */
  ifAbsent?: boolean;
}
export interface FieldIncrInput extends IncrInput {
  field: string;
}
export interface FieldDeleteInput extends FieldInput {
  /** `If-Match: *`: the field must exist (404 field_not_found otherwise). */
  ifPresent?: boolean;
}

/**
 * HGETALL's flat [field, value, ...] as an object. Field names are data: '__proto__' or 'constructor' must
 * become own properties of an object without a prototype, never reach a setter: on an object without a
 * prototype there is none ('__proto__' is Object.prototype's accessor), so an assignment makes an own property
 * (as Object.defineProperty did, at several times the cost). (Copy it with a spread, never with Object.assign,
 * which would call the '__proto__' setter of the target.)
 */
function fieldsObject(pairs: readonly string[]): Record<string, string> {
  const fields = Object.create(null) as Record<string, string>;
  for (let i = 0; i < pairs.length; i += 2) fields[pairs[i] as string] = pairs[i + 1] as string;
  return fields;
}

const fieldNotFound = (field: string, key: string) =>
  new ApiError('field_not_found', `Field '${field}' not found in hash '${key}'`);

export function hashOps(limits: Limits) {
  return {
    ...keyOps('hash'),
    /** The whole hash (at most UNPAGED_MAX fields), or one page of it with `cursor`/`limit` (ops/pages.ts). */
    get: ({ key, ...page }: KeyInput & PageInput) =>
      valued(
        paged(page)
          ? pageOp('hash', key, page, (p) => {
              const { items, ttl, cursor, complete } = present(p, key);
              return ok({ fields: fieldsObject(items), ttl, cursor, complete });
            })
          : readOp(
              'hash',
              key,
              (reply) => {
                const [pairs, ttl] = present(reply, key);
                return ok({ fields: fieldsObject(pairs as string[]), ttl });
              },
              'WHOLE',
              'HGETALL',
            ),
        'fields',
      ),
    /** Merge (HSET) keeps the expiry; replace drops the old fields and the expiry in the same script call. */
    set: ({ key, fields, ...write }: HashSetInput) => {
      const args = Object.entries(fields).flatMap(([field, value]) => {
        checkValueSize(value, limits, `value of field '${field.slice(0, 100)}'`);
        return [field, value];
      });
      return writeOp(
        'hash',
        key,
        collectionWrite(write, 'HLEN', 2),
        (r) => created(r?.[0] === 0, { success: true, key, fields_count: r?.[2] }),
        'HSET',
        ...args,
      );
    },
    /**
     * The value and the field's own TTL: typed_read's 'FIELD' (HGET and HTTL at once) where the server may have
     * hash-field expiry; where the probe found HTTL refused no field can expire, so HGET alone and -1.
     */
    getField: ({ key, field }: FieldInput) => {
      const read = fieldExpiry(limits.capabilities?.(), 'HTTL') === false ? 'HGET' : 'FIELD';
      const answer = (reply: ReadReply) => {
        // HGET's reply has no field TTL: -1.
        const [value, , ttl = -1] = reply ?? [];
        // HTTL's -2 beside a value: the field expired (or was deleted) between the commands of the plain read
        // (engine/plain-reads.ts). A read a moment later answers 404: so does this one, rather than a wrong TTL.
        if (typeof value !== 'string' || ttl === -2) throw fieldNotFound(field, key);
        return ok({ field, value, ttl });
      };
      return valued(readOp('hash', key, answer, read, field), 'field', 'value');
    },
    /** HSETNX writes nothing when the field exists, which is what If-None-Match asks for. */
    setField: ({ key, field, value, ttl, ifAbsent }: FieldSetInput) => {
      checkValueSize(value, limits);
      // Refused before anything is sent where the probe found HEXPIRE refused (typed_write checks it itself only
      // for a write built before the first probe answered).
      if (ttl !== undefined && fieldExpiry(limits.capabilities?.(), 'HEXPIRE') === false)
        throw noFieldExpiry();
      const exists = () => new ApiError('field_exists', `Field '${field}' already exists in hash '${key}'`);
      const answer = (isNew: boolean) => created(isNew, { success: true, field, value });
      const op = elementWriteOp(
        'hash',
        key,
        { fieldTtl: ttl },
        ifAbsent && exists,
        answer,
        ifAbsent ? 'HSETNX' : 'HSET',
        field,
        value,
      );
      return valued(op, 'field', 'value');
    },
    /** A missing field counts from 0 (201); `ttl` applies only when this call creates the whole hash. */
    incrField: (input: FieldIncrInput) =>
      valued(incrOp('hash', input, { field: input.field }, input.field), 'field'),
    deleteField: ({ key, field, ifPresent }: FieldDeleteInput) =>
      elementOp(
        'hash',
        key,
        ifPresent && (() => fieldNotFound(field, key)),
        (deleted) => ok({ success: true, deleted }),
        'HDEL',
        field,
      ),
    keys: ({ key, ...page }: KeyInput & PageInput) =>
      valued(
        paged(page)
          ? pageOp('hash', key, page, (p) => {
              const { items, cursor, complete } = present(p, key);
              return ok({ keys: items.filter((_, i) => i % 2 === 0), cursor, complete });
            })
          : readOp('hash', key, (reply) => ok({ keys: present(reply, key)[0] }), 'WHOLE', 'HKEYS'),
        'keys',
      ),
    values: ({ key, ...page }: KeyInput & PageInput) =>
      valued(
        paged(page)
          ? pageOp('hash', key, page, (p) => {
              const { items, cursor, complete } = present(p, key);
              return ok({ values: items.filter((_, i) => i % 2 === 1), cursor, complete });
            })
          : readOp('hash', key, (reply) => ok({ values: present(reply, key)[0] }), 'WHOLE', 'HVALS'),
        'values',
      ),
  };
}

export type HashOps = ReturnType<typeof hashOps>;
