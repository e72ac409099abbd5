// What one setting declares, the parsers a few of them need, and the Config type derived from a table of them.

/** The JSON Schema subset the table uses; AJV checks the raw value against it (strict mode). */
export type SettingSchema = Readonly<{
  type: 'integer' | 'boolean' | 'string';
  default?: number | boolean | string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  enum?: readonly string[];
}>;

export interface Setting {
  /** Where the value goes in Config, dotted ('redis.commandTimeoutMs'). */
  readonly path: string;
  readonly schema: SettingSchema;
  /** One line for the README table. */
  readonly description: string;
  /** Applied by a reload; without it a change is named as needing a restart. */
  readonly live?: true;
  /** The field `info` shows the value under; without it `info` does not show it. */
  readonly info?: string;
  /** May hold a credential: never shown (a test checks that no secret has an `info` name). */
  readonly secret?: true;
  /** Unset: the (validated) value of this other setting. */
  readonly defaultFrom?: string;
  /** The validated raw value -> the Config value, where Config wants more than a scalar. */
  readonly parse?: (value: never) => unknown;
}

export type HostPort = Readonly<{ host: string; port: number }>;

/** `host:port,host:port` (already checked by the schema's pattern) -> a list; unset stays unset. */
export function hostPorts(list: string | undefined): ReadonlyArray<HostPort> | undefined {
  return list?.split(',').map((hp) => {
    const [host = '', p = ''] = hp.split(':');
    return { host, port: Number(p) };
  });
}

/** SVC_CORS_ORIGINS (checked by the schema's pattern) -> its origins in lower case ('*' alone: any origin). */
export function parseOrigins(list: string): readonly string[] {
  return list === '' ? [] : list.split(',').map((origin) => origin.toLowerCase());
}

/** Express's `trust proxy`: a boolean, a hop count, or addresses/subnets as given. */
export function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^\d+$/.test(value) ? Number(value) : value;
}

type SchemaValue<S> = S extends { enum: readonly (infer E)[] }
  ? E
  : S extends { type: 'integer' }
    ? number
    : S extends { type: 'boolean' }
      ? boolean
      : string;

/** The value AJV leaves for a setting: undefined when it has neither a default nor a value. */
export type RawValue<S extends Setting> = S['schema'] extends { default: number | boolean | string }
  ? SchemaValue<S['schema']>
  : SchemaValue<S['schema']> | undefined;

type Value<S extends Setting> = S extends { parse: (value: never) => infer R }
  ? R
  : S extends { defaultFrom: string }
    ? SchemaValue<S['schema']>
    : RawValue<S>;

type Head<P> = P extends `${infer H}.${string}` ? H : P;
type Inside<E, H extends string> = E extends [`${H}.${infer Rest}`, infer V] ? [Rest, V] : never;
type At<E, H extends string> = E extends [H, infer V] ? V : never;
/** [dotted path, value] pairs -> the nested, readonly object they describe. */
type Nest<E extends [string, unknown]> = {
  readonly [H in Head<E[0]> & string]: [Inside<E, H>] extends [never] ? At<E, H> : Nest<Inside<E, H>>;
};

/** The Config a table of settings builds: one readonly leaf per setting, at its path, of its type. */
export type ConfigOf<T extends Record<string, Setting>> = Nest<
  { [K in keyof T]: [T[K]['path'], Value<T[K]>] }[keyof T]
>;
