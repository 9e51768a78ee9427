// `aicerine demo`: no OpenStack needed. Starts the simulator with a realistic cloud, records a
// snapshot of it through the same clients `aicerine record` uses, plans, and prints the plan.
import type { Command } from 'commander';
import { createLogger } from '../../cloud/log.js';
import { recordSnapshot } from '../../cloud/record.js';
import { openSession } from '../../cloud/session.js';
import { planSnapshot } from '../../planner/index.js';
import { DEFAULT_POLICY } from '../../policy/defaults.js';
import { cloudsYaml, envExports, SIM_DEFAULT_PASSWORD, simAdminConfig } from '../../sim/connect-info.js';
import { demoSynthSpec } from '../../sim/demo-cloud.js';
import { startSimServer } from '../../sim/http/server.js';
import { setupSim } from '../../sim/setup.js';
import { describeCommand } from '../command-list.js';
import { formatPlan } from '../format-plan.js';
import { parseIntegerOption, parseNumberOption, parsePortOption } from '../numbers.js';

interface DemoFlags {
  keep?: boolean;
  port: string;
  speed: string;
  synth?: string;
  moves: string;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command('demo')
    .description(describeCommand('demo'))
    .option('--keep', 'keep the simulated cloud running afterwards (Ctrl-C stops it)')
    .option('--port <n>', 'simulator port (0: any free port)', '0')
    .option('--speed <x>', 'virtual seconds per real second', '60')
    .option(
      '--synth <spec>',
      'cloud to simulate: hosts,servers,groups,seed,aggregates,disabled',
      demoSynthSpec(),
    )
    .option('--moves <n>', 'most moves to show per aggregate', '12')
    .option('--json', 'print the whole plan (aicerine-plan/1) as JSON instead of the table')
    .action(async (flags: DemoFlags) => {
      const out = process.stdout;
      const port = parsePortOption('--port', flags.port);
      const speed = parseNumberOption('--speed', flags.speed, { min: 0 });
      const shown = parseIntegerOption('--moves', flags.moves, { min: 0 });
      const started = Date.now();
      const { cloud } = await setupSim({ synth: flags.synth ?? demoSynthSpec(), speed });
      const password = SIM_DEFAULT_PASSWORD;
      const sim = await startSimServer({ cloud, password, port });
      try {
        const disabled = cloud.hosts.filter((h) => h.status === 'disabled').map((h) => h.name);
        out.write(
          `Simulated cloud at ${sim.url}: ${cloud.hosts.length} hosts in ${cloud.aggregates.length} aggregates, ` +
            `${cloud.servers.length} servers, ${cloud.groups.length} server groups; ` +
            `disabled for maintenance: ${disabled.join(', ') || 'none'}\nLoad: ${cloud.load.description}\n\n`,
        );
        const session = await openSession({
          config: simAdminConfig(sim.authUrl, password, 'aicerine demo'),
          prometheusUrl: `${sim.url}/prometheus`,
          logger: createLogger({ level: 'warn' }),
        });
        const recorded = await recordSnapshot(session, { source: `openstack:aicerine-demo` });
        const snap = recorded.snapshot;
        out.write(
          `Recorded through the OpenStack APIs: ${snap.hosts.length} hosts, ${snap.servers.length} servers, ` +
            `${snap.serverGroups.length} server groups (${session.stats.summary()})\n`,
        );
        for (const w of recorded.warnings) out.write(`  note: ${w}\n`);
        const plan = planSnapshot(snap, DEFAULT_POLICY, { now: () => Date.now() });
        out.write(
          flags.json
            ? `${JSON.stringify(plan, null, 2)}\n`
            : `\n${formatPlan(plan, { maxMovesShown: shown })}`,
        );
        out.write(`\nDone in ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);
        if (!flags.keep) {
          out.write(
            'Run `aicerine demo --keep` to keep the simulated cloud running and explore it with the openstack CLI.\n',
          );
          return;
        }
        const info = {
          authUrl: sim.authUrl,
          password,
          cloudName: 'aicerine-sim',
          prometheusUrl: `${sim.url}/prometheus`,
          controlUrl: `${sim.url}/sim`,
        };
        out.write(
          `\nThe simulated cloud keeps running. Point the openstack CLI at it:\n\n${envExports(info)}\n`,
        );
        out.write(`# or put this in clouds.yaml and use --os-cloud aicerine-sim\n${cloudsYaml(info)}\n`);
        out.write('  openstack server list --all-projects --long\n  openstack hypervisor list\n');
        out.write(
          '  openstack --os-compute-api-version 2.30 server migrate --live-migration --host HOST SERVER\n\n',
        );
        out.write('Ctrl-C stops it.\n');
        await new Promise<void>((resolve) => {
          process.once('SIGINT', () => resolve());
          process.once('SIGTERM', () => resolve());
        });
      } finally {
        await sim.close();
      }
    });
}
