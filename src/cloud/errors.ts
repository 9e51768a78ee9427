// Errors from talking to a cloud. Each one names what failed and what the operator can do
// about it, because the person reading it is usually at a terminal with an openrc in hand.

export type CloudErrorKind =
  | 'config'
  | 'unreachable'
  | 'auth'
  | 'catalog'
  | 'microversion'
  | 'http'
  | 'conflict'
  | 'circuit-open'
  | 'timeout'
  | 'protocol'
  /** Refused before sending: the call is not one the session's credential is meant to make. */
  | 'not-allowed';

export class CloudError extends Error {
  readonly kind: CloudErrorKind;
  /** What the operator should change; part of the message too. */
  readonly fix: string | undefined;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  /** The service's machine-readable error code, when it gives one (Placement: placement.concurrent_update). */
  readonly code: string | undefined;

  constructor(
    kind: CloudErrorKind,
    message: string,
    opts: { fix?: string; status?: number; requestId?: string; code?: string; cause?: unknown } = {},
  ) {
    super(
      opts.fix ? `${message}. ${opts.fix}` : message,
      opts.cause === undefined ? {} : { cause: opts.cause },
    );
    this.name = 'CloudError';
    this.kind = kind;
    this.fix = opts.fix;
    this.status = opts.status;
    this.requestId = opts.requestId;
    this.code = opts.code;
  }
}

export function isCloudError(e: unknown, kind?: CloudErrorKind): e is CloudError {
  return e instanceof CloudError && (kind === undefined || e.kind === kind);
}
