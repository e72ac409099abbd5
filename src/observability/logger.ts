// The winston logger: JSON or text lines to stdout, level from config; changeable on reload.
import { Writable } from 'node:stream';
import winston from 'winston';
import type { Config } from '../config';

export type Logger = winston.Logger;

const text = winston.format.printf(({ timestamp, level, message, ...meta }) => {
  const err = meta.err instanceof Error ? meta.err : undefined;
  if (err) meta.err = err.message;
  const fields = Object.entries(meta)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${timestamp} ${level} ${message}${fields ? ` ${fields}` : ''}${err?.stack ? `\n${err.stack}` : ''}`;
});

const json = winston.format((info) => {
  if (info.err instanceof Error) info.err = { message: info.err.message, stack: info.err.stack };
  return info;
})();

// Lines logged during one turn of the event loop go to stdout together at the end of the turn: writing to a
// file or a pipe is synchronous in Node, one system call per line otherwise (several µs of every request).
let pending = '';
function flush(): void {
  if (pending === '') return;
  process.stdout.write(pending);
  pending = '';
}
// process.exit() and a crash still get the last lines out (the write is synchronous).
process.once('exit', flush);
const stdout = new Writable({
  decodeStrings: false,
  write(line: string, _encoding, done) {
    if (pending === '') setImmediate(flush);
    pending += line;
    done();
  },
});
const stdoutTransport = () => new winston.transports.Stream({ stream: stdout });

export function createLogger(log: Config['log'], silent = false): Logger {
  return winston.createLogger({
    level: log.level,
    silent,
    format: winston.format.combine(
      winston.format.timestamp(),
      log.format === 'json' ? winston.format.combine(json, winston.format.json()) : text,
    ),
    transports: [stdoutTransport()],
  });
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
