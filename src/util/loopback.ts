import { isIP } from 'node:net';

/** Whether a listen address reaches this machine only (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1';
  return false;
}
