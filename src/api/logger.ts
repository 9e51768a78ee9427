// The API's structured JSON log (pino): one line per request with its id, method, route, status,
// duration and caller, and never a secret. The URL is logged without its query values (a client
// may put anything there) and headers are not logged at all.
import { type DestinationStream, type Logger, pino } from 'pino';

export type ApiLogger = Logger;

/** Paths that could hold secrets if some caller ever logs a request or a configuration object. */
const REDACT = [
  'req.headers["x-auth-token"]',
  'req.headers["x-subject-token"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-auth-token"]',
  'token',
  'password',
  'secret',
  '*.token',
  '*.password',
  '*.secret',
];

/** "/v1/plans?status=proposed&limit=5" -> "/v1/plans?status=&limit=" */
export function pathForLog(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url.slice(0, 500);
  const keys = url
    .slice(q + 1)
    .split('&')
    .map((kv) => kv.split('=')[0]!.slice(0, 40))
    .slice(0, 20);
  return `${url.slice(0, Math.min(q, 500))}?${keys.map((k) => `${k}=`).join('&')}`;
}

export function createApiLogger(opts: { level?: string; destination?: DestinationStream } = {}): ApiLogger {
  return pino(
    {
      level: opts.level ?? 'info',
      base: { service: 'aicerine-api' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT, censor: '[redacted]' },
      serializers: {
        req: (req: { method?: string; url?: string }) => ({
          method: req.method,
          url: pathForLog(req.url ?? ''),
        }),
        res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
        err: pino.stdSerializers.err,
      },
    },
    opts.destination,
  );
}
