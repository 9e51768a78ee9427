// Which Keystone roles may take which API action. Defaults below; a policy file (YAML or JSON,
// `action: [roles]`) replaces the roles of the actions it names.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { toInputIssues } from '../formats/schema-helpers.js';

export const API_ACTIONS = [
  'read',
  'plan.approve',
  'plan.reject',
  'execution.abort',
  'pause',
  'resume',
  'quarantine.release',
  'snapshot.record',
  'what-if',
  'config.read',
  'task.create',
  'task.cancel',
  'task.clean',
  'maintenance.start',
  'maintenance.control',
] as const;
export type ApiAction = (typeof API_ACTIONS)[number];

export type ApiPolicy = Record<ApiAction, readonly string[]>;

/** A role for operators that need no admin elsewhere in the cloud. */
export const OPERATOR_ROLE = 'aicerine-operator';
const OPERATE = ['admin', OPERATOR_ROLE];

/**
 * reader: read and what-if; operator: approve, reject, abort, pause, resume, release; admin: all, with the
 * configuration. Keystone's implied roles (admin ⊃ member ⊃ reader) are listed out, because a
 * token carries implied roles only where the deployment defines the inference.
 */
export const DEFAULT_API_POLICY: ApiPolicy = {
  read: ['reader', 'member', 'admin', OPERATOR_ROLE],
  'plan.approve': OPERATE,
  'plan.reject': OPERATE,
  'execution.abort': OPERATE,
  pause: OPERATE,
  resume: OPERATE,
  'quarantine.release': OPERATE,
  'snapshot.record': OPERATE,
  // A what-if stores and executes nothing: whoever reads may ask one.
  'what-if': ['reader', 'member', 'admin', OPERATOR_ROLE],
  'config.read': ['admin'],
  'task.create': OPERATE,
  'task.cancel': OPERATE,
  'task.clean': OPERATE,
  'maintenance.start': OPERATE,
  'maintenance.control': OPERATE,
};

const policyFileSchema = z.strictObject(
  Object.fromEntries(API_ACTIONS.map((a) => [a, z.array(z.string().min(1)).optional()])) as Record<
    ApiAction,
    z.ZodOptional<z.ZodArray<z.ZodString>>
  >,
);

export function parseApiPolicy(doc: unknown, file?: string): ApiPolicy {
  const parsed = policyFileSchema.safeParse(doc ?? {}, { reportInput: true });
  if (!parsed.success) throw new InputError(toInputIssues(parsed.error, doc, file));
  const out: ApiPolicy = { ...DEFAULT_API_POLICY };
  for (const action of API_ACTIONS) {
    const roles = parsed.data[action];
    if (roles !== undefined) out[action] = roles;
  }
  return out;
}

export async function loadApiPolicy(path: string): Promise<ApiPolicy> {
  return parseApiPolicy(parseYaml(await readFile(path, 'utf8')), path);
}

export function allows(policy: ApiPolicy, action: ApiAction, roles: readonly string[]): boolean {
  const allowed = policy[action];
  return roles.some((r) => allowed.includes(r));
}
