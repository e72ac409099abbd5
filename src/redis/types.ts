// Facts about the Redis types the families store: what TYPE answers for each, and the command that counts a key.

/** Redis type (as TYPE answers it) -> the command that answers a key's size: its elements, a string's bytes. */
export const SIZE_COMMANDS = {
  string: 'STRLEN',
  hash: 'HLEN',
  set: 'SCARD',
  list: 'LLEN',
  zset: 'ZCARD',
} as const;

/** What Redis's TYPE answers for a key of a family. */
export type RedisType = keyof typeof SIZE_COMMANDS;
/** The commands that count a key's elements. */
export type SizeCommand = (typeof SIZE_COMMANDS)[RedisType];

/** The size command of a Redis type; undefined for the types no family stores (stream, ...). */
export const sizeCommand = (type: string): SizeCommand | undefined =>
  Object.hasOwn(SIZE_COMMANDS, type) ? SIZE_COMMANDS[type as RedisType] : undefined;
