// Reloading the configuration at run time (admin endpoint and SIGHUP): apply the live settings, name the rest.
import { type Config, ConfigError, settingValue, withSettings } from './config';
import type { Context } from './context';
import { ApiError } from './errors';
import { reconfigureLogger } from './observability/logger';
import { SETTING_LIST } from './settings';

/** The settings whose values differ between two configs, in table order. */
const changed = (a: Config, b: Config) =>
  SETTING_LIST.filter(
    ([name]) => JSON.stringify(settingValue(a, name)) !== JSON.stringify(settingValue(b, name)),
  );

function describe(applied: string[], restart: string[], other: string[]): string {
  if (applied.length + restart.length + other.length === 0) return 'Configuration reloaded; nothing changed';
  const parts = ['Configuration reloaded'];
  if (applied.length > 0) parts.push(`applied ${applied.join(', ')}`);
  parts.push(...other);
  if (restart.length > 0)
    parts.push(`${restart.join(', ')} changed and ${restart.length > 1 ? 'need' : 'needs'} a restart`);
  return parts.join('; ');
}

/**
 * Re-reads the configuration with `load` and applies the live settings (`live` in settings.ts): the new config
 * keeps the running values of everything else, which needs a restart. The `onReload` hooks (the auth
 * family reloads its keys, and says which changed) run first; if loading or a hook fails, nothing is applied,
 * a warning lists the problems, and the error is a 500 server_error whose message lists them too.
 */
export function createReload(ctx: Context, load: () => Config): () => Promise<string> {
  return async () => {
    const previous = ctx.config;
    let next: Config;
    const other: string[] = [];
    try {
      next = load();
      for (const hook of ctx.onReload) other.push(...((await hook(next)) ?? []));
    } catch (err) {
      const problems = err instanceof ConfigError ? err.problems : [(err as Error).message];
      // A broken file is an operator's to fix, not a bug: a warning without a stack.
      ctx.logger.warn('configuration not reloaded; the running configuration stays', { problems });
      throw new ApiError('server_error', `Configuration not reloaded: ${problems.join('; ')}`, {
        cause: err,
      });
    }
    const changes = changed(previous, next);
    const applied = changes.filter(([, s]) => s.live).map(([name]) => name);
    const restart = changes.filter(([, s]) => !s.live).map(([name]) => name);
    ctx.config = withSettings(previous, next, applied);
    if (JSON.stringify(previous.log) !== JSON.stringify(next.log)) reconfigureLogger(ctx.logger, next.log);
    const message = describe(applied, restart, other);
    ctx.logger.info(message);
    return message;
  };
}
