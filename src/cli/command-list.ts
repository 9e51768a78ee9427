// The commands of `aicerine`, with their one-line descriptions and how to load each. main.ts
// loads only the module of the command being run (a plan need not load the simulator or the
// OpenStack clients); `aicerine --help` loads none. Each command module takes its description
// from here, so the listing and the command's own help cannot drift apart.
import type { Command } from 'commander';

interface CommandModule {
  register(program: Command): void;
}

export interface CommandEntry {
  readonly name: string;
  readonly description: string;
  readonly load: () => Promise<CommandModule>;
}

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'plan',
    description: 'plan live migrations for a snapshot (pure: reads files, touches no cloud)',
    load: () => import('./commands/plan.js'),
  },
  {
    name: 'check-plan',
    description: 'check a plan against its snapshot, independently of the planner (exit 1 on any violation)',
    load: () => import('./commands/check-plan.js'),
  },
  {
    name: 'snapshot',
    description: 'make snapshots without a cloud: synthetic or from traces',
    load: () => import('./commands/snapshot.js'),
  },
  {
    name: 'sim',
    description: 'serve a simulated OpenStack cloud (Keystone, Nova, Placement, Prometheus) on 127.0.0.1',
    load: () => import('./commands/sim.js'),
  },
  {
    name: 'demo',
    description:
      'try Aicerine without OpenStack: a simulated cloud run by the service, with the dashboard (--plan-only: print one plan)',
    load: () => import('./commands/demo.js'),
  },
  {
    name: 'record',
    description: 'record a snapshot (aicerine-snapshot/1) of a live OpenStack cloud',
    load: () => import('./commands/record.js'),
  },
  {
    name: 'check',
    description:
      'check the preconditions Aicerine needs, per aggregate (exit status 1 when one does not hold)',
    load: () => import('./commands/check.js'),
  },
  {
    name: 'credentials',
    description:
      'print the access rules, policy.yaml and openstack commands for the reader and actuator credentials',
    load: () => import('./commands/credentials.js'),
  },
  {
    name: 'config',
    description: 'validate the service configuration (config check FILE) or print a commented example',
    load: () => import('./commands/config.js'),
  },
  {
    name: 'costs',
    description: 'fit live-migration durations per aggregate from os-migrations history, with their error',
    load: () => import('./commands/costs.js'),
  },
  {
    name: 'serve',
    description: 'run the control loop: record, plan and act per aggregate as configured',
    load: () => import('./commands/serve.js'),
  },
  {
    name: 'status',
    description: 'the service: version, store health and pauses (through its API)',
    load: () => import('./commands/status.js'),
  },
  {
    name: 'aggregates',
    description:
      'mode, pause, window, data health, latest plan and imbalance per aggregate (through the service API)',
    load: () => import('./commands/aggregates.js'),
  },
  {
    name: 'plans',
    description: "list, show, approve and reject the service's plans (through its API)",
    load: () => import('./commands/plans.js'),
  },
  {
    name: 'show-plan',
    description: 'a plan of the service, its moves with reasons and the decisions taken (through its API)',
    load: () => import('./commands/show-plan.js'),
  },
  {
    name: 'approve',
    description: 'approve a plan of an assisted aggregate, whole or some moves (through the service API)',
    load: () => import('./commands/approve.js'),
  },
  {
    name: 'reject',
    description: 'reject a plan of an assisted aggregate, whole or some moves (through the service API)',
    load: () => import('./commands/reject.js'),
  },
  {
    name: 'executions',
    description: 'list, show and abort executions of plans (through the service API)',
    load: () => import('./commands/executions.js'),
  },
  {
    name: 'abort',
    description: 'abort a running execution: the rest is skipped, migrations in flight are aborted in Nova',
    load: () => import('./commands/abort.js'),
  },
  {
    name: 'what-if',
    description:
      "plan an aggregate's latest snapshot with changes (drain, add hosts, policy); nothing stored or run",
    load: () => import('./commands/what-if.js'),
  },
  {
    name: 'snapshots',
    description: 'record a snapshot now, list and download those the service keeps (through its API)',
    load: () => import('./commands/snapshots.js'),
  },
  {
    name: 'quarantine',
    description: 'list and release quarantined servers (through the service API)',
    load: () => import('./commands/quarantine.js'),
  },
  {
    name: 'tasks',
    description:
      'operator tasks: list, show, evacuate a host, purge a project, validate hosts, cancel, clean (through the service API)',
    load: () => import('./commands/tasks.js'),
  },
  {
    name: 'maintenance',
    description:
      'rolling maintenance of an aggregate: start, status, list, pause, resume, abort, done HOST (through the service API)',
    load: () => import('./commands/maintenance.js'),
  },
  {
    name: 'pause',
    description: 'stop new migrations, everywhere or in one aggregate (through the service API)',
    load: () => import('./commands/pause.js'),
  },
  {
    name: 'resume',
    description: 'lift a pause made with aicerine pause (a pause in the configuration file stays)',
    load: () => import('./commands/resume.js'),
  },
  {
    name: 'audit',
    description: 'the audit log, newest first (through the service API)',
    load: () => import('./commands/audit.js'),
  },
];

export function describeCommand(name: string): string {
  const entry = COMMANDS.find((c) => c.name === name);
  if (entry === undefined) throw new Error(`no command ${name} in COMMANDS`);
  return entry.description;
}

/** The command an argument list runs (`plan`, or `help plan`), if it names one. */
export function commandOf(args: readonly string[]): CommandEntry | undefined {
  const words = args.filter((a) => !a.startsWith('-'));
  const name = words[0] === 'help' ? words[1] : words[0];
  return COMMANDS.find((c) => c.name === name);
}
