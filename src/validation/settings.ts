// The validate-compute settings (`tasks.validation` in aicerine.yaml) with their defaults
// applied and files resolved: what the validation reads, in milliseconds and absolute paths.
import { resolve } from 'node:path';
import { parseDuration } from '../config/duration.js';
import type { ValidationParsed } from '../config/schema.js';
import type { SshEndpoint } from './ssh.js';

export interface ValidationSettings {
  /** Glance image name or id. */
  image: string;
  /** The flavor whose size the canary flavor copies. */
  flavor: string;
  /** 'none', 'auto' or a network uuid. */
  network: string;
  keyPair: string | null;
  ssh: {
    user: string;
    port: number;
    privateKeyFile: string;
    /** Template with {address} and {host}. */
    address: string;
    jump: SshEndpoint | null;
  };
  check: string;
  bootTimeoutMs: number;
  sshTimeoutMs: number;
  checkTimeoutMs: number;
  projectName: string;
  aggregateName: string;
  traitName: string;
  role: string;
}

export const VALIDATION_DEFAULTS = {
  keyPair: null,
  ssh: { port: 22, address: '{address}', jump: null },
  bootTimeout: '10m',
  sshTimeout: '5m',
  checkTimeout: '2m',
  projectName: 'aicerine-validation',
  aggregateName: 'aicerine-validation',
  traitName: 'CUSTOM_AICERINE_VALIDATION',
  role: 'admin',
} as const;

const ms = (d: string): number => parseDuration(d) ?? 0;

export function validationSettings(v: ValidationParsed, baseDir: string): ValidationSettings {
  const d = VALIDATION_DEFAULTS;
  return {
    image: v.image,
    flavor: v.flavor,
    network: v.network,
    keyPair: v.keyPair ?? d.keyPair,
    ssh: {
      user: v.ssh.user,
      port: v.ssh.port ?? d.ssh.port,
      privateKeyFile: resolve(baseDir, v.ssh.privateKeyFile),
      address: v.ssh.address ?? d.ssh.address,
      jump: v.ssh.jump
        ? {
            host: v.ssh.jump.host,
            port: v.ssh.jump.port ?? d.ssh.port,
            user: v.ssh.jump.user,
            privateKeyFile: resolve(baseDir, v.ssh.jump.privateKeyFile),
          }
        : null,
    },
    check: v.check,
    bootTimeoutMs: v.bootTimeout ?? ms(VALIDATION_DEFAULTS.bootTimeout),
    sshTimeoutMs: v.sshTimeout ?? ms(VALIDATION_DEFAULTS.sshTimeout),
    checkTimeoutMs: v.checkTimeout ?? ms(VALIDATION_DEFAULTS.checkTimeout),
    projectName: v.projectName ?? d.projectName,
    aggregateName: v.aggregateName ?? d.aggregateName,
    traitName: v.traitName ?? d.traitName,
    role: v.role ?? d.role,
  };
}
