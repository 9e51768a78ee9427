// A small leveled logger for the cloud layer. Everything written through it passes through
// redact(), so a token, password or secret never reaches a terminal or a log file.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const SECRET_KEY = /(token|password|secret|passwd|credential_secret|authorization|x-subject-token)/i;

/** Deep copy with every value under a secret-looking key replaced by "***". */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8) return '…';
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = SECRET_KEY.test(k) && v !== null && typeof v !== 'object' ? '***' : redact(v, depth + 1);
    }
    return out;
  }
  return value;
}

export function createLogger(opts: { level?: LogLevel; write?: (line: string) => void } = {}): Logger {
  const min = ORDER[opts.level ?? 'warn'];
  const write = opts.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < min) return;
    const extra = fields ? ` ${JSON.stringify(redact(fields))}` : '';
    write(`[${level}] ${msg}${extra}`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

export const silentLogger: Logger = createLogger({ level: 'error', write: () => {} });
