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
/** A role for those who watch the whole cloud through Aicerine without acting (a NOC, an auditor). */
export const READER_ROLE = 'aicerine-reader';
const OPERATE = ['admin', OPERATOR_ROLE];
/**
 * Everything Aicerine shows is cloud-wide (every project's servers, every host): a role in one
 * project is no reason to see the others'. Only roles that already see the whole cloud read:
 * admin, the two Aicerine roles, and the readers of a system-scoped token (`system:` below).
 */
const READ = ['admin', READER_ROLE, OPERATOR_ROLE, 'system:reader', 'system:member', 'system:admin'];

/**
 * read and what-if: cloud-wide roles only; operator: approve, reject, abort, pause, resume,
 * release; admin: all, with the configuration. Keystone's implied roles (admin ⊃ member ⊃ reader)
 * are listed out, because a token carries implied roles only where the deployment defines the
 * inference.
 */
export const DEFAULT_API_POLICY: ApiPolicy = {
  read: READ,
  'plan.approve': OPERATE,
  'plan.reject': OPERATE,
  'execution.abort': OPERATE,
  pause: OPERATE,
  resume: OPERATE,
  'quarantine.release': OPERATE,
  'snapshot.record': OPERATE,
  // A what-if stores and executes nothing: whoever reads may ask one.
  'what-if': READ,
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

/** Who a policy rule is matched against: a token's roles, and as `system:ROLE` those of a system-scoped one. */
export interface RoleHolder {
  roles: readonly string[];
  system: boolean;
}

export function allows(policy: ApiPolicy, action: ApiAction, holder: RoleHolder): boolean {
  const allowed = policy[action];
  return holder.roles.some((r) => allowed.includes(r) || (holder.system && allowed.includes(`system:${r}`)));
}
