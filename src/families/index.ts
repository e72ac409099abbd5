// Every data family the service serves: routes, batch items, permissions, type unions and test seeds come from here.
import { hashes } from './hash';
import { lists } from './list';
import { sets } from './set';
import { strings } from './string';
import { zsets } from './zset';

/** To add a family: declare it (see string.ts), write its ops, its part of openapi.yaml and its tests. */
export const FAMILIES = [strings, hashes, sets, lists, zsets] as const;

export type FamilyName = (typeof FAMILIES)[number]['name'];
/** What Redis's TYPE answers for a key of a family. */
export type RedisType = (typeof FAMILIES)[number]['redisType'];
/** The commands that count a key's elements. */
export type SizeCommand = NonNullable<(typeof FAMILIES)[number]['sizeCommand']>;
