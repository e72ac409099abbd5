// Every data family the service serves: routes, batch items, permissions, type unions and test seeds come from here.

import { SIZE_COMMANDS } from '../redis/types';
import { hashes } from './hash';
import { lists } from './list';
import { sets } from './set';
import { strings } from './string';
import { zsets } from './zset';

/** To add a family: declare it (see string.ts), write its ops, its contract fragment and its tests (docs/development.md). */
export const FAMILIES = [strings, hashes, sets, lists, zsets] as const;

export type FamilyName = (typeof FAMILIES)[number]['name'];
export type { RedisType, SizeCommand } from '../redis/types';

/** Each family's Redis type and size command, which tsc checks against the facts of redis/types.ts. */
export const FAMILY_SIZE_COMMANDS: {
  [F in (typeof FAMILIES)[number] as F['redisType']]: F['sizeCommand'];
} = SIZE_COMMANDS;
