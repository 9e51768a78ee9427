import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import { readJsonFile } from '../../formats/json-file.js';
import { checkOutputPath } from '../../formats/output-path.js';
import { writeSnapshot } from '../../formats/snapshot-file.js';
import type { Snapshot } from '../../model/snapshot.js';
import { BITBRAINS_MAX_HOSTS, importBitbrains } from '../../snapshot/import-bitbrains.js';
import { importVmr2lWithWarnings } from '../../snapshot/import-vmr2l.js';
import { SYNTH_LIMITS, SynthOptionError, synthesizeSnapshot } from '../../snapshot/synth.js';
import { loadBitbrains } from '../../traces/bitbrains.js';
import { describeCommand } from '../command-list.js';
import { parseIntegerOption, parseSeedOption } from '../numbers.js';

interface SynthFlags {
  hosts: string;
  servers: string;
  groups: string;
  seed: string;
  aggregates?: string;
  disabled?: string;
  output: string;
}

interface Vmr2lFlags {
  cluster?: string;
  loadFrom?: string;
  output: string;
}

interface BitbrainsFlags {
  hosts?: string;
  seed: string;
  at: string;
  output: string;
}

/** Option ranges that depend on each other (e.g. --disabled below --hosts) are checked by the maker. */
function made(make: () => Snapshot): Snapshot {
  try {
    return make();
  } catch (err) {
    // Named by its flag: "--disabled: … got 10" says which of the numbers given is wrong.
    if (err instanceof SynthOptionError)
      throw new InputError([{ path: `--${err.option}`, message: err.message }]);
    if (err instanceof RangeError) throw new InputError([{ path: '', message: err.message }]);
    throw err;
  }
}

async function write(file: string, s: Snapshot): Promise<void> {
  await writeSnapshot(file, s);
  const groups = s.serverGroups.length;
  process.stdout.write(
    `wrote ${file}: ${s.hosts.length} hosts, ${s.servers.length} servers, ${groups} server group${groups === 1 ? '' : 's'}\n`,
  );
}

export function register(program: Command): void {
  const snapshot = program.command('snapshot').description(describeCommand('snapshot'));

  snapshot
    .command('synth')
    .description('generate a realistic synthetic cluster (deterministic: same options, same bytes)')
    .requiredOption('--hosts <n>', 'compute hosts')
    .requiredOption('--servers <n>', 'servers (VMs)')
    .requiredOption('--groups <n>', 'server groups (all four policies, some hard ones violated)')
    .requiredOption('--seed <n>', 'random seed (0..4294967295)')
    .option('--aggregates <n>', 'split hosts into this many aggregates agg-1..agg-N (default: none)')
    .option('--disabled <n>', 'hosts disabled for maintenance, to be drained (default 0)')
    .requiredOption('-o, --output <file>', 'snapshot to write (.json or .json.gz)')
    .action(async (flags: SynthFlags) => {
      const opts = {
        hosts: parseIntegerOption('--hosts', flags.hosts, { min: 1, max: SYNTH_LIMITS.hosts }),
        servers: parseIntegerOption('--servers', flags.servers, { min: 0, max: SYNTH_LIMITS.servers }),
        groups: parseIntegerOption('--groups', flags.groups, { min: 0 }),
        seed: parseSeedOption('--seed', flags.seed),
        aggregates:
          flags.aggregates === undefined
            ? 0
            : parseIntegerOption('--aggregates', flags.aggregates, { min: 0 }),
        disabled:
          flags.disabled === undefined ? 0 : parseIntegerOption('--disabled', flags.disabled, { min: 0 }),
      };
      await checkOutputPath(flags.output);
      await write(
        flags.output,
        made(() => synthesizeSnapshot(opts)),
      );
    });

  const imports = snapshot.command('import').description('convert a public trace into a snapshot');

  imports
    .command('vmr2l')
    .description('import a VMR2L (ByteDance) rescheduling instance; each cluster becomes an aggregate')
    .argument('<file>', 'VMR2L instance (.json or .json.gz)')
    .option('--cluster <name>', 'import only this cluster (cluster_name)')
    .option('--load-from <path>', 'Bitbrains traces folder or hourly CSV: gives each VM a measured load')
    .requiredOption('-o, --output <file>', 'snapshot to write (.json or .json.gz)')
    .action(async (file: string, flags: Vmr2lFlags) => {
      await checkOutputPath(flags.output);
      const doc = await readJsonFile(file);
      const fileModified = (await stat(file)).mtime;
      const withLoad = flags.loadFrom === undefined ? undefined : await loadBitbrains(flags.loadFrom);
      const { snapshot: s, warnings } = importVmr2lWithWarnings(doc, {
        file,
        fileModified,
        ...(flags.cluster === undefined ? {} : { cluster: flags.cluster }),
        ...(withLoad === undefined ? {} : { withLoad }),
      });
      for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
      await write(flags.output, s);
    });

  imports
    .command('bitbrains')
    .description('import Bitbrains VM series onto synthetic hosts, with the load of one hour')
    .argument('<path>', 'Bitbrains traces folder (derived/ or raw-*/), folder of per-VM CSVs, or hourly CSV')
    .option('--hosts <n>', 'hosts to place the VMs on (default: enough for about 70% allocation)')
    .option('--seed <n>', 'random seed for the placement order', '1')
    .option('--at <hour>', 'hour of the trace whose load the servers get (0 = first)', '0')
    .requiredOption('-o, --output <file>', 'snapshot to write (.json or .json.gz)')
    .action(async (path: string, flags: BitbrainsFlags) => {
      // Checked before the traces are read, which takes a while on the full set.
      const hosts =
        flags.hosts === undefined
          ? undefined
          : parseIntegerOption('--hosts', flags.hosts, { min: 1, max: BITBRAINS_MAX_HOSTS });
      const seed = parseSeedOption('--seed', flags.seed);
      const at = parseIntegerOption('--at', flags.at, { min: 0 });
      await checkOutputPath(flags.output);
      const series = await loadBitbrains(path);
      await write(
        flags.output,
        made(() => importBitbrains(series, { seed, at, ...(hosts === undefined ? {} : { hosts }) })),
      );
    });
}
