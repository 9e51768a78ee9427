// `aicerine credentials`: the access rules, policy.yaml additions and `openstack` commands
// for Aicerine's reader and actuator application credentials, and the access rules of the
// optional tasks credential (canaries in their own project, under the default policies).
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import {
  accessRules,
  credentialCommands,
  DEFAULT_PREFIXES,
  policyJson,
  policyRules,
  policyYaml,
  prefixesFromCatalog,
  type ServicePrefixes,
} from '../../cloud/credentials.js';
import { openSession } from '../../cloud/session.js';
import { InputError } from '../../errors.js';
import { writingTo } from '../../formats/output-path.js';
import { describeCommand } from '../command-list.js';

interface CredentialFlags {
  project: string;
  user: string;
  readerRole: string;
  actuatorRole: string;
  computePrefix?: string;
  placementPrefix?: string;
  networkPrefix?: string;
  network: boolean;
  fromCloud?: boolean;
  cloud?: string;
  outputDir?: string;
}

/** Keystone names as the generated script uses them unquoted: no blanks, no shell syntax. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;
/** A URL path prefix: empty, or /segment/segment. */
const PREFIX = /^(\/[A-Za-z0-9._~%-]+)*$/;

/** Every bad name or prefix, named by its flag, before anything is written. */
function checkFlags(flags: CredentialFlags): void {
  const issues: { path: string; message: string; value: unknown }[] = [];
  for (const [flag, value] of [
    ['--project', flags.project],
    ['--user', flags.user],
    ['--reader-role', flags.readerRole],
    ['--actuator-role', flags.actuatorRole],
  ] as const)
    if (!NAME.test(value))
      issues.push({
        path: flag,
        message: 'expected a Keystone name (letters, digits, _ . @ -; 64 at most)',
        value,
      });
  for (const [flag, value] of [
    ['--compute-prefix', flags.computePrefix],
    ['--placement-prefix', flags.placementPrefix],
    ['--network-prefix', flags.networkPrefix],
  ] as const)
    if (value !== undefined && !PREFIX.test(value))
      issues.push({ path: flag, message: 'expected a URL path prefix such as /compute (or empty)', value });
  if (issues.length > 0) throw new InputError(issues);
}

async function prefixes(flags: CredentialFlags): Promise<ServicePrefixes> {
  const p: ServicePrefixes = { ...DEFAULT_PREFIXES };
  if (flags.fromCloud || flags.cloud) {
    // The catalog's endpoint paths are what the services see as their prefix.
    const s = await openSession(flags.cloud ? { load: { cloud: flags.cloud } } : {});
    Object.assign(p, await prefixesFromCatalog((type) => s.service(type).endpoint(), flags.network));
  }
  if (flags.computePrefix !== undefined) p.compute = flags.computePrefix;
  if (flags.placementPrefix !== undefined) p.placement = flags.placementPrefix;
  if (flags.networkPrefix !== undefined) p.network = flags.networkPrefix;
  return p;
}

export function register(program: Command): void {
  program
    .command('credentials')
    .description(describeCommand('credentials'))
    .option('--project <name>', 'project the Aicerine user works in', 'admin')
    .option('--user <name>', 'the Aicerine user', 'aicerine')
    .option('--reader-role <name>', 'dedicated role for reads', 'aicerine-reader')
    .option(
      '--actuator-role <name>',
      'dedicated role for live migration and ratio writes',
      'aicerine-actuator',
    )
    .option(
      '--compute-prefix <path>',
      `Nova path prefix as the service sees it (default ${DEFAULT_PREFIXES.compute})`,
    )
    .option('--placement-prefix <path>', 'Placement path prefix (default none)')
    .option('--network-prefix <path>', `Neutron path prefix (default ${DEFAULT_PREFIXES.network})`)
    .option('--no-network', 'leave Neutron out (no SR-IOV detection)')
    .option('--from-cloud', 'read the prefixes from the catalog of the configured cloud')
    .option('--cloud <name>', 'cloud in clouds.yaml for --from-cloud')
    .option('--output-dir <dir>', 'write the files there instead of printing them')
    .action(async (flags: CredentialFlags) => {
      checkFlags(flags);
      const p = await prefixes(flags);
      const reader = accessRules('reader', p, flags.network);
      const actuator = accessRules('actuator', p, flags.network);
      const tasks = accessRules('tasks', p, flags.network);
      const roles = { reader: flags.readerRole, actuator: flags.actuatorRole };
      const policies = policyRules(roles);
      const files: [string, string][] = [
        ['reader-access-rules.json', `${JSON.stringify(reader, null, 2)}\n`],
        ['actuator-access-rules.json', `${JSON.stringify(actuator, null, 2)}\n`],
        ['tasks-access-rules.json', `${JSON.stringify(tasks, null, 2)}\n`],
        ['nova-policy.yaml', policyYaml(policies.nova ?? {}, 'Nova')],
        ['placement-policy.json', policyJson(policies.placement ?? {})],
      ];
      if (flags.network) files.push(['neutron-policy.yaml', policyYaml(policies.neutron ?? {}, 'Neutron')]);
      const dir = flags.outputDir;
      const commands = credentialCommands({
        project: flags.project,
        user: flags.user,
        roles,
        readerRulesFile: dir ? join(dir, 'reader-access-rules.json') : 'reader-access-rules.json',
        actuatorRulesFile: dir ? join(dir, 'actuator-access-rules.json') : 'actuator-access-rules.json',
      });
      files.push(['create-credentials.sh', `#!/bin/sh\nset -e\n${commands}`]);
      if (dir) {
        const existing = await stat(dir).catch(() => undefined);
        if (existing !== undefined && !existing.isDirectory()) {
          throw new InputError([{ file: dir, path: '--output-dir', message: 'is a file, not a folder' }]);
        }
        if (existing === undefined) {
          // mkdir -p: every missing folder on the way is made, and the operator is told.
          const made = await writingTo(dir, () => mkdir(dir, { recursive: true }));
          const above = made !== undefined && resolve(made) !== resolve(dir) ? ` (and ${made} above it)` : '';
          process.stdout.write(`created folder ${dir}${above}\n`);
        }
        const replaced: string[] = [];
        for (const [name, text] of files) {
          if (await stat(join(dir, name)).catch(() => undefined)) replaced.push(join(dir, name));
          await writingTo(join(dir, name), () => writeFile(join(dir, name), text));
        }
        process.stdout.write(`wrote ${files.map(([n]) => join(dir, n)).join(', ')}\n`);
        // Files an operator may have edited since: say they were written over.
        if (replaced.length > 0) process.stdout.write(`replaced what was there: ${replaced.join(', ')}\n`);
        return;
      }
      for (const [name, text] of files) process.stdout.write(`==> ${name} <==\n${text}\n`);
    });
}
