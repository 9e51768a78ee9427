// `aicerine demo`: no OpenStack needed. Runs the product: the simulator and the service together
// (src/service/demo.ts), the dashboard URL first, then one line per cycle until Ctrl-C or
// --cycles. `--plan-only`: the simulator with a realistic cloud, recorded through the same
// clients `aicerine record` uses, planned once, the plan printed.
import type { Command } from 'commander';
import { createLogger } from '../../cloud/log.js';
import { recordSnapshot } from '../../cloud/record.js';
import { openSession } from '../../cloud/session.js';
import { planSnapshot } from '../../planner/index.js';
import { DEFAULT_POLICY } from '../../policy/defaults.js';
import { DEMO_API_PORT, formatDemoLine, startDemo } from '../../service/demo.js';
import { cloudsYaml, envExports, SIM_DEFAULT_PASSWORD, simAdminConfig } from '../../sim/connect-info.js';
import { demoSynthSpec } from '../../sim/demo-cloud.js';
import { startSimServer } from '../../sim/http/server.js';
import { setupSim } from '../../sim/setup.js';
import { describeCommand } from '../command-list.js';
import { formatPlan } from '../format-plan.js';
import { parseIntegerOption, parseNumberOption, parsePortOption } from '../numbers.js';

interface DemoFlags {
  planOnly?: boolean;
  cycles?: string;
  interval: string;
  stateDir?: string;
  keep?: boolean;
  port?: string;
  speed: string;
  synth?: string;
  moves: string;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command('demo')
    .description(describeCommand('demo'))
    .option(
      '--port <n>',
      `API and dashboard port on 127.0.0.1 (default ${DEMO_API_PORT}, or a free one when it is taken; 0: any free port); with --plan-only: the simulator's port`,
    )
    .option('--cycles <n>', 'stop after this many cycles (default: until Ctrl-C)')
    .option('--interval <s>', 'real seconds between cycles', '5')
    .option(
      '--state-dir <dir>',
      'keep the store (SQLite) and recorded snapshots here (default: a temporary folder)',
    )
    .option('--speed <x>', 'virtual seconds per real second', '60')
    .option('--plan-only', 'the previous demo: record the simulated cloud once, plan, print the plan')
    .option('--keep', '--plan-only: keep the simulated cloud running afterwards (Ctrl-C stops it)')
    .option(
      '--synth <spec>',
      `--plan-only: cloud to simulate: hosts,servers,groups,seed,aggregates,disabled (default ${demoSynthSpec()})`,
    )
    .option('--moves <n>', '--plan-only: most moves to show per aggregate', '12')
    .option('--json', '--plan-only: print the whole plan (aicerine-plan/1) as JSON instead of the table')
    .action(async (flags: DemoFlags) => {
      const speed = parseNumberOption('--speed', flags.speed, { min: 0 });
      if (!flags.planOnly) {
        await runServiceDemo(flags, speed);
        return;
      }
      const out = process.stdout;
      const port = parsePortOption('--port', flags.port ?? '0');
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
            'Run `aicerine demo --plan-only --keep` to keep the simulated cloud running and explore it with the openstack CLI.\n',
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

async function runServiceDemo(flags: DemoFlags, speed: number): Promise<void> {
  const out = process.stdout;
  const cycles = flags.cycles === undefined ? null : parseIntegerOption('--cycles', flags.cycles, { min: 1 });
  const interval = parseNumberOption('--interval', flags.interval, { min: 0.1, max: 3600 });
  const port = flags.port === undefined ? undefined : parsePortOption('--port', flags.port);
  for (const f of ['keep', 'json', 'synth'] as const)
    if (flags[f] !== undefined) throw new Error(`--${f} goes with --plan-only`);
  const demo = await startDemo({
    ...(port !== undefined ? { port } : {}),
    ...(flags.stateDir !== undefined ? { stateDir: flags.stateDir } : {}),
    speed,
    warn: (line) => process.stderr.write(`${line}\n`),
  });
  let stopping = false;
  const stop = () => {
    stopping = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    out.write(
      `Dashboard: ${demo.url}/  (open it in a browser; API ${demo.url}/v1, no authentication, loopback only)\n`,
    );
    out.write(
      `Simulated cloud: ${demo.sim.cloud.hosts.length} hosts, ${demo.sim.cloud.servers.length} servers; ` +
        `agg-1 active (window open), agg-2 assisted (hot host ${demo.hotHost}: approve its plan on the dashboard or with ` +
        `\`aicerine approve PLAN --api ${demo.url} --no-auth\`), agg-3 observe; virtual clock x${speed}, a cycle every ${interval} s` +
        `${flags.stateDir !== undefined ? `; state in ${demo.stateDir}` : ''}\n`,
    );
    for (let n = 1; !stopping && (cycles === null || n <= cycles); n++) {
      const lines = await demo.cycle(interval * 1000);
      for (const l of lines) out.write(`${formatDemoLine(n, l)}\n`);
    }
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    await demo.stop();
  }
}
