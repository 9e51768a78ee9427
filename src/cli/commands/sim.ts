// `aicerine sim`: a simulated OpenStack (Keystone, Nova, Placement, Prometheus) on loopback.
import type { Command } from 'commander';
import { cloudsYaml, envExports, SIM_DEFAULT_PASSWORD } from '../../sim/connect-info.js';
import { startSimServer } from '../../sim/http/server.js';
import { parseTimingSpec } from '../../sim/model.js';
import { type LoadChoice, setupSim } from '../../sim/setup.js';
import { describeCommand } from '../command-list.js';
import { parseIntegerOption, parseNumberOption, parsePortOption } from '../numbers.js';

interface SimFlags {
  snapshot?: string;
  synth?: string;
  port: string;
  speed: string;
  load: string;
  trace?: string;
  password: string;
  maxLiveMigrations?: string;
  pinCpuRatio: string[];
  timing: string[];
  migrationProgress?: boolean;
  verbose?: boolean;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** "compute-03=2" or "compute-03=2@120": nova.conf cpu_allocation_ratio on that host, enforced every period. */
function parsePin(spec: string): { host: string; ratio: number; periodSeconds: number } {
  const m = /^([^=]+)=([0-9.]+)(?:@([0-9.]+))?$/.exec(spec);
  const ratio = Number(m?.[2]);
  const period = m?.[3] === undefined ? 60 : Number(m[3]);
  if (!m || !(ratio > 0) || !(period > 0)) {
    throw new Error(
      `--pin-cpu-ratio ${spec}: expected HOST=RATIO or HOST=RATIO@SECONDS, e.g. compute-03=2@60`,
    );
  }
  return { host: m[1] as string, ratio, periodSeconds: period };
}

const LOADS: LoadChoice[] = ['auto', 'trace', 'generated', 'static'];

export function register(program: Command): void {
  program
    .command('sim')
    .description(describeCommand('sim'))
    .option('--snapshot <file>', 'seed the cloud from a snapshot (.json or .json.gz)')
    .option(
      '--synth <spec>',
      'seed a synthetic cloud: hosts,servers,groups,seed[,aggregates[,disabled]]; aggregates and disabled default to 0 (no aggregates). Without --synth or --snapshot: 40,1200,30,1,4,1 (4 aggregates, 1 disabled host)',
    )
    .option('--port <n>', 'TCP port (0: any free port)', '8790')
    .option('--speed <x>', 'virtual seconds per real second', '1')
    .option('--load <model>', `load model: ${LOADS.join(' | ')} (auto: Bitbrains traces if found)`, 'auto')
    .option('--trace <file>', 'Bitbrains hourly CSV for --load trace/auto')
    .option('--password <pw>', 'password of the users admin and demo (as in demo)', SIM_DEFAULT_PASSWORD)
    .option('--max-live-migrations <n>', 'default max_concurrent_live_migrations per host', '1')
    .option(
      '--pin-cpu-ratio <host=ratio[@s]>',
      'act as if nova.conf on HOST set cpu_allocation_ratio (rewritten every s seconds, default 60); repeatable',
      collect,
      [],
    )
    .option(
      '--timing <key=seconds>',
      'live-migration timing, e.g. scheduleSeconds=0.2 or completionLagSeconds=0 (docs/simulator.md); repeatable',
      collect,
      [],
    )
    .option(
      '--migration-progress',
      'report memory_* progress of running migrations (libvirt) instead of null',
    )
    .option('-v, --verbose', 'log every request')
    .action(async (flags: SimFlags) => {
      const port = parsePortOption('--port', flags.port);
      const speed = parseNumberOption('--speed', flags.speed, { min: 0 });
      if (!LOADS.includes(flags.load as LoadChoice))
        throw new Error(`--load: expected ${LOADS.join(', ')}, got ${flags.load}`);
      const maxLm = parseIntegerOption('--max-live-migrations', flags.maxLiveMigrations ?? '1', { min: 1 });
      const { cloud } = await setupSim({
        snapshotFile: flags.snapshot,
        synth: flags.synth,
        speed,
        load: flags.load as LoadChoice,
        tracePath: flags.trace,
        maxConcurrentLiveMigrations: maxLm,
        timing: Object.assign({}, ...flags.timing.map(parseTimingSpec)),
        migrationProgress: flags.migrationProgress === true,
      });
      for (const spec of flags.pinCpuRatio) {
        const pin = parsePin(spec);
        if (!cloud.hostsByName.has(pin.host))
          throw new Error(`--pin-cpu-ratio ${spec}: no host ${pin.host} in the cloud`);
        cloud.pinCpuAllocationRatio(pin.host, { ratio: pin.ratio, periodSeconds: pin.periodSeconds });
      }
      const handle = await startSimServer({
        cloud,
        password: flags.password,
        port,
        ...(flags.verbose ? { log: (l: string) => process.stderr.write(`${l}\n`) } : {}),
      });
      const info = {
        authUrl: handle.authUrl,
        password: flags.password,
        cloudName: 'aicerine-sim',
        prometheusUrl: `${handle.url}/prometheus`,
        controlUrl: `${handle.url}/sim`,
      };
      const out = process.stdout;
      out.write(
        `aicerine sim: ${cloud.hosts.length} hosts, ${cloud.servers.length} servers, ${cloud.aggregates.length} aggregates, ` +
          `${cloud.groups.length} server groups; load: ${cloud.load.description}; speed x${speed}\n\n`,
      );
      out.write(`# clouds.yaml\n${cloudsYaml(info)}\n# or the environment\n${envExports(info)}\n`);
      out.write(`Prometheus: ${info.prometheusUrl}   (aicerine record --prometheus ${info.prometheusUrl})\n`);
      out.write(
        `Control:    ${info.controlUrl}/status, /sim/clock, /sim/faults, /sim/migration-failures, /sim/hosts/NAME (docs/simulator.md)\n`,
      );
      out.write('Ctrl-C stops it.\n');
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          handle.close().then(resolve, resolve);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
