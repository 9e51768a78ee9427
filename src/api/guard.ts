// What stands between a browser and the API before any route runs: the Host header must name this
// service (a page whose DNS name was pointed at it, DNS rebinding, gets 421), a request that changes
// state must be one a page on another site cannot send without a preflight the API never grants
// (JSON, or the clients' own header), and every answer tells the browser not to frame, sniff or
// leak it.
import { networkInterfaces } from 'node:os';
import { ApiError } from './errors.js';

/** Sent by the CLI and the dashboard on every request; a cross-site page cannot add it unasked. */
export const CLIENT_HEADER = 'x-aicerine-client';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The dashboard loads its script and styles from the API's origin only; nothing inline, no
 * framing, no plugins, no form posting elsewhere.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

function bare(host: string): string {
  const h = host.trim().toLowerCase();
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/**
 * The names a Host header may carry: the address the API listens on (every interface's address
 * when it is a wildcard, and localhost beside a loopback one), plus those configured.
 */
export function allowedHostNames(listenHost: string, extra: readonly string[]): Set<string> {
  const names = new Set<string>(extra.map(bare));
  const listen = bare(listenHost);
  if (WILDCARD.has(listen)) {
    for (const n of LOOPBACK_NAMES) names.add(n);
    for (const addrs of Object.values(networkInterfaces()))
      for (const a of addrs ?? []) names.add(bare(a.address));
  } else {
    names.add(listen);
    if (LOOPBACK_NAMES.includes(listen) || listen.startsWith('127.'))
      for (const n of LOOPBACK_NAMES) names.add(n);
  }
  return names;
}

/** The host name of a Host header value (without its port; an IPv6 address without brackets). */
export function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end < 0 ? h : h.slice(1, end);
  }
  const colon = h.lastIndexOf(':');
  return colon < 0 ? h : h.slice(0, colon);
}

export function checkHost(header: string | undefined, allowed: ReadonlySet<string>): void {
  // HTTP/1.1 has the server refuse a request without Host; a HTTP/1.0 one carries no name a page
  // could have chosen.
  if (header === undefined) return;
  if (allowed.has(hostName(header))) return;
  throw new ApiError(
    421,
    'misdirected-request',
    `headers.host: ${hostName(header).slice(0, 100)} is not a name this API answers to (it answers to ${[...allowed].sort().join(', ')}); a proxy or DNS alias in front of it goes in api.allowedHosts`,
    'headers.host',
    header.length > 100 ? `${header.slice(0, 97)}...` : header,
  );
}

/**
 * A page on another site can POST a form or a `no-cors` fetch with no Content-Type, text/plain,
 * or a form encoding, and nothing else without a preflight. So a state change needs a JSON body or
 * the clients' header; any other media type is refused as such.
 */
export function checkStateChange(
  method: string,
  headers: Record<string, string | string[] | undefined>,
): void {
  if (!STATE_CHANGING.has(method)) return;
  const type = headers['content-type'];
  if (typeof type === 'string' && type.trim() !== '') {
    const media = type.split(';')[0]!.trim().toLowerCase();
    if (media === 'application/json') return;
    throw new ApiError(
      415,
      'unsupported-media-type',
      'headers.content-type: send application/json',
      'headers.content-type',
      type.length > 100 ? `${type.slice(0, 97)}...` : type,
    );
  }
  if (headers[CLIENT_HEADER] !== undefined) return;
  throw new ApiError(
    403,
    'cross-site-refused',
    `headers.content-type: missing: a request that changes state sends a JSON body (Content-Type: application/json) or the header X-Aicerine-Client, which a page on another site cannot send`,
    'headers.content-type',
  );
}
