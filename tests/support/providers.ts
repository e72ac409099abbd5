// Managed Redis providers as test profiles: a redis-server with each one's refused commands renamed away, its forced
// cluster mode and argument cap, and the least-privilege ACL user of docs/managed-redis.md (read from the doc).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/observability/logger';
import { createService, type Service } from '../../src/service';
import { contract } from './app';
import { apiKey } from './auth';
import { startRedisCluster } from './redis-cluster';
import { LOOPBACK, type RedisServer, startRedisServer } from './redis-server';
import { recordStatuses } from './statuses';

export interface Profile {
  /** The row of docs/managed-redis.md it backs. */
  readonly title: string;
  /** Commands the provider refuses (its own documentation), renamed away with `rename-command X ""`. */
  readonly refused: readonly string[];
  /** The provider always runs in cluster mode: a one-master Redis Cluster. */
  readonly cluster: boolean;
  /** SVC_REDIS_MAX_ARGUMENTS for it (ElastiCache Serverless: 3,999 arguments per command). */
  readonly maxArguments?: number;
  /** The ACL rule of the service's user instead of the doc's least-privilege one (the common "app" profile). */
  readonly acl?: string;
}

/**
 * What the probe also finds unavailable on an engine before Redis 8 / Valkey 9: hash-field expiry's commands,
 * absent there (not renamed), from the engine and version it reports.
 */
export function missingFieldExpiry({
  engine,
  version,
}: {
  engine: string;
  version: string | null;
}): string[] {
  const has = Number(version?.split('.')[0]) >= (engine === 'valkey' ? 9 : 8);
  return has ? [] : ['HEXPIRE', 'HTTL'];
}

/** Refused by every provider below: server administration a managed service keeps to itself. */
const ADMINISTRATION = [
  'DEBUG',
  'SHUTDOWN',
  'SAVE',
  'BGSAVE',
  'BGREWRITEAOF',
  'REPLICAOF',
  'SLAVEOF',
  'SYNC',
  'PSYNC',
];

export const PROFILES: Readonly<Record<string, Profile>> = {
  'elasticache-node': {
    title: 'ElastiCache (node-based)',
    refused: [...ADMINISTRATION, 'CONFIG', 'MIGRATE'],
    cluster: false,
  },
  'elasticache-serverless': {
    title: 'ElastiCache Serverless',
    refused: [
      ...ADMINISTRATION,
      ...[
        'MEMORY',
        'WAIT',
        'CLIENT',
        'PSUBSCRIBE',
        'FUNCTION',
        'FCALL',
        'FCALL_RO',
        'OBJECT',
        'KEYS',
        'MOVE',
      ],
      ...['SWAPDB', 'CONFIG', 'COMMAND', 'MONITOR', 'MIGRATE'],
    ],
    cluster: true,
    maxArguments: 3999,
  },
  memorydb: {
    title: 'MemoryDB',
    refused: [...ADMINISTRATION, 'CONFIG', 'MODULE', 'ACL', 'MIGRATE'],
    cluster: true,
  },
  memorystore: {
    title: 'Memorystore',
    refused: [...ADMINISTRATION, 'COMMAND', 'CONFIG', 'OBJECT', 'CLIENT', 'MONITOR', 'ACL'],
    cluster: false,
  },
  'azure-cache': {
    title: 'Azure Cache for Redis',
    refused: [...ADMINISTRATION, 'CONFIG', 'ACL', 'MIGRATE', 'MONITOR'],
    cluster: false,
  },
  'azure-managed': {
    title: 'Azure Managed Redis',
    // Cross-slot commands are refused as a Redis Cluster refuses them.
    refused: [...ADMINISTRATION, 'SELECT', 'MOVE', 'CONFIG', 'MIGRATE'],
    cluster: true,
  },
  'redis-cloud': {
    title: 'Redis Cloud',
    refused: [...ADMINISTRATION, 'CONFIG', 'MIGRATE', 'MONITOR'],
    cluster: false,
  },
  upstash: {
    title: 'Upstash',
    // Upstash answers COMMAND with an empty array and CONFIG for notify-keyspace-events only: both refused here.
    refused: [...ADMINISTRATION, 'COMMAND', 'CONFIG', 'CLIENT', 'MONITOR', 'MIGRATE', 'OBJECT', 'MEMORY'],
    cluster: false,
  },
  'acl-app': {
    title: 'Any, with the common "app" ACL user',
    refused: [],
    cluster: false,
    acl: '+@all -@dangerous',
  },
};

export const DOC = path.join(__dirname, '..', '..', 'docs', 'managed-redis.md');

/** The ACL rule docs/managed-redis.md gives for the service's user: the line after `user svc on >PASSWORD`. */
export function documentedAcl(): string {
  const m = /^user svc on >PASSWORD (.+)$/m.exec(readFileSync(DOC, 'utf8'));
  if (!m) throw new Error('docs/managed-redis.md: no "user svc on >PASSWORD <rule>" line');
  return m[1] as string;
}

const PASSWORD = 'profile-password-0123';

export interface ProfileServer {
  /** SVC_* settings that reach it as the service's ACL user. */
  readonly env: Record<string, string>;
  /** A full-rights URL (the default user), for looking at what the service wrote. */
  readonly adminUrl: string;
  /** Stops the (first) server and starts it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the profile's server (or one-master Cluster) with its commands renamed away and the service's user. */
export async function startProfile(profile: Profile): Promise<ProfileServer> {
  const acl = profile.acl ?? documentedAcl().replace(/^~\* &\* /, '');
  const config = [
    ...profile.refused.map((command) => `rename-command ${command} ""`),
    `user svc on >${PASSWORD} ~* &* ${acl}`,
  ].join('\n');
  const url = (port: number) => `redis://svc:${PASSWORD}@${LOOPBACK}:${port}`;
  const settings = (port: number): Record<string, string> => ({
    SVC_REDIS_URL: url(port),
    ...(profile.maxArguments ? { SVC_REDIS_MAX_ARGUMENTS: String(profile.maxArguments) } : {}),
  });
  if (profile.cluster) {
    // A lone master learns no address of its own from a MEET: it announces the loopback one.
    const cluster = await startRedisCluster(1, { config: `${config}\ncluster-announce-ip ${LOOPBACK}` });
    const port = cluster.servers[0]?.port as number;
    return {
      env: { ...settings(port), SVC_REDIS_CLUSTER_NODES: cluster.nodes },
      adminUrl: `redis://${LOOPBACK}:${port}`,
      restart: () => restart(cluster.servers[0]),
      stop: cluster.stop,
    };
  }
  const server = await startRedisServer({ config });
  return {
    env: settings(server.port),
    adminUrl: server.url,
    restart: () => restart(server),
    stop: () => server.stop(),
  };
}

/** A server with `refused` renamed away, reached as the common "app" ACL user (INFO, FLUSHDB, ... denied). */
export function startRenamed(refused: string[]): Promise<ProfileServer> {
  return startProfile({ ...(PROFILES['acl-app'] as Profile), refused });
}

async function restart(server: RedisServer | undefined): Promise<void> {
  await server?.stop();
  await server?.start();
}

/** The credential of the profile tests' requests. */
export const admin = apiKey('managed-admin', ['read', 'write', 'admin']);

/** A service on the profile's server as its ACL user (rate limits off), statuses recorded; not yet connected. */
export async function serviceOn(server: ProfileServer, env: Record<string, string> = {}): Promise<Service> {
  const config = loadConfig({
    ...server.env,
    SVC_RATE_LIMIT_ENABLED: 'false',
    SVC_API_KEYS: JSON.stringify({ keys: [admin] }),
    ...env,
  });
  const service = createService(config, { logger: createLogger(config.log, true), contract: contract() });
  recordStatuses(service.data);
  return service;
}
