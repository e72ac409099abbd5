// The winston logger: JSON or text lines to stdout, level from config; changeable on reload.
import winston from 'winston';
import TransportStream from 'winston-transport';
import type { Config } from '../config';

export type Logger = winston.Logger;

/** A text line: timestamp, level, message, then key=value for each field that has a value. */
function textLine(
  timestamp: unknown,
  level: string,
  message: unknown,
  meta: Record<string, unknown>,
): string {
  const fields = Object.entries(meta)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${timestamp} ${level} ${message}${fields ? ` ${fields}` : ''}`;
}

const text = winston.format.printf(({ timestamp, level, message, ...meta }) => {
  const err = meta.err instanceof Error ? meta.err : undefined;
  if (err) meta.err = err.message;
  return `${textLine(timestamp, level, message, meta)}${err?.stack ? `\n${err.stack}` : ''}`;
});
const textFormat = winston.format.combine(winston.format.timestamp(), text);

const MESSAGE = Symbol.for('message'); // triple-beam's MESSAGE: the finished line a transport writes
/** logform's own JSON format (safe-stable-stringify): only for a line JSON.stringify refuses (a cycle, a BigInt). */
const safeJson = winston.format.json();

/**
 * One JSON object per line, `timestamp`, `level` and `message` first. logform's json() configures a new
 * safe-stable-stringify for every line and sorts the keys; plain JSON.stringify does the request lines in a
 * fraction of the time.
 */
const json = winston.format((info) => {
  if (info.err instanceof Error) info.err = { message: info.err.message, stack: info.err.stack };
  const { timestamp: _t, level, message, ...fields } = info;
  try {
    info[MESSAGE] = JSON.stringify({ timestamp: new Date().toISOString(), level, message, ...fields });
  } catch {
    info.timestamp = new Date().toISOString();
    return safeJson.transform(info, safeJson.options);
  }
  return info;
})();

// Lines are written to stdout together, at most LOG_FLUSH_MS after the first of them (or once LOG_FLUSH_BYTES are
// waiting): writing to a file or a pipe is synchronous in Node, one system call per line otherwise (several µs of
// every request), and one per turn of the event loop still cost about 2 µs per request under load.
const LOG_FLUSH_MS = 20;
const LOG_FLUSH_BYTES = 64 * 1024;
let pending = '';
let flushTimer: NodeJS.Timeout | undefined;
/** Writes the lines still waiting (before a last word on stderr, say). */
export function flushLogs(): void {
  clearTimeout(flushTimer);
  flushTimer = undefined;
  if (pending === '') return;
  process.stdout.write(pending);
  pending = '';
}
// process.exit() and a crash still get the last lines out (the write is synchronous).
process.once('exit', flushLogs);

function append(line: string): void {
  if (pending === '') flushTimer = setTimeout(flushLogs, LOG_FLUSH_MS).unref();
  pending += `${line}\n`;
  if (pending.length >= LOG_FLUSH_BYTES) flushLogs();
}

/** A winston transport that adds each line to `pending`; no stream and no 'logged' event per line. */
class Stdout extends TransportStream {
  override log(info: Record<string | symbol, unknown>, done: () => void): void {
    append(info[MESSAGE] as string);
    done();
  }
}
const stdoutTransport = () => new Stdout();

/**
 * The loggers that write one of our two formats to stdout, and which: their request lines skip winston (its
 * stream of formats and transports cost a few µs of every request) and are appended as winston would write them.
 */
const direct = new WeakMap<Logger, 'json' | 'text'>();

function detect(logger: Logger): void {
  const [only, ...others] = logger.transports;
  const format = logger.format === json ? 'json' : logger.format === textFormat ? 'text' : undefined;
  if (format && only instanceof Stdout && others.length === 0) direct.set(logger, format);
  else direct.delete(logger);
}

/**
 * Whether `logger` writes info lines: winston's isInfoEnabled() searches the transports with a closure on every
 * call; one of our direct loggers has a single transport with no level of its own, so its level decides.
 */
export function infoEnabled(logger: Logger): boolean {
  if (!direct.has(logger)) return logger.isInfoEnabled();
  const { levels, level } = logger;
  return (levels[level] ?? -1) >= (levels.info ?? 0);
}

/** Logs one request line at info, as `logger.info('request', fields)` would (the caller checks the level). */
export function logRequest(logger: Logger, fields: Record<string, unknown>): void {
  const format = direct.get(logger);
  if (format === undefined) {
    logger.info('request', fields);
  } else if (!logger.silent) {
    const timestamp = isoNow();
    if (format === 'text') {
      append(textLine(timestamp, 'info', 'request', fields));
      return;
    }
    // The line JSON.stringify({timestamp, level, message, ...fields}) gives, without building that object.
    const rest = JSON.stringify(fields);
    append(
      `{"timestamp":"${timestamp}","level":"info","message":"request"${rest === '{}' ? '}' : `,${rest.slice(1)}`}`,
    );
  }
}

let isoMs = 0;
let iso = '';
/** new Date().toISOString(), made once per millisecond (a busy instance logs several requests in one). */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    iso = new Date(ms).toISOString();
  }
  return iso;
}

export function createLogger(log: Config['log'], silent = false): Logger {
  const logger = winston.createLogger({
    level: log.level,
    silent,
    format: log.format === 'json' ? json : textFormat,
    transports: [stdoutTransport()],
  });
  // Whoever reconfigures it (a reload, a test capturing lines), logRequest follows.
  const configure = logger.configure.bind(logger);
  logger.configure = (options) => {
    configure(options);
    detect(logger);
  };
  detect(logger);
  return logger;
}

/** Applies a reloaded log configuration to a running logger (a silent one, as in tests, stays silent). */
export function reconfigureLogger(logger: Logger, log: Config['log']): void {
  const fresh = createLogger(log);
  logger.configure({
    silent: logger.silent,
    level: log.level,
    format: fresh.format,
    transports: [stdoutTransport()],
  });
}
