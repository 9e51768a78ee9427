import { describe, expect, it } from 'vitest';
import { createLogger, redact } from '../../src/cloud/log.js';

describe('log redaction', () => {
  it('hides tokens, passwords and secrets at any depth', () => {
    expect(
      redact({
        headers: { 'X-Auth-Token': 'abc', Accept: 'json' },
        auth: { password: 'p', application_credential_secret: 's', user: 'u' },
        list: [{ token: 't' }],
      }),
    ).toEqual({
      headers: { 'X-Auth-Token': '***', Accept: 'json' },
      auth: { password: '***', application_credential_secret: '***', user: 'u' },
      list: [{ token: '***' }],
    });
  });

  it('writes only at or above its level', () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'warn', write: (l) => lines.push(l) });
    log.debug('d');
    log.info('i');
    log.warn('w', { password: 'x' });
    log.error('e');
    expect(lines).toEqual(['[warn] w {"password":"***"}', '[error] e']);
  });
});
