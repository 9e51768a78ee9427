// The deployment files: the systemd unit passes `systemd-analyze verify` (which needs no running
// systemd), and the container image definition copies what the package ships, runs as a user of
// its own and starts `serve`. The image itself is built only where a builder works.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const UNIT = readFileSync(join(ROOT, 'deploy/aicerine@.service'), 'utf8');
const CONTAINERFILE = readFileSync(join(ROOT, 'deploy/Containerfile'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'aic-deploy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p)) ?? null;

/** systemd-analyze's findings on a unit text (instance r1); exit status and every line it printed. */
async function verify(text: string, name: string): Promise<{ code: number; output: string }> {
  // The binary the package installs is not installed here: the unit points at this checkout's.
  const file = join(dir, `${name}@r1.service`);
  writeFileSync(file, text.replace('/usr/bin/aicerine', join(ROOT, 'bin/aicerine.js')));
  try {
    const { stdout, stderr } = await run(analyze!, ['verify', '--man=no', file], { timeout: 30_000 });
    return { code: 0, output: `${stdout}${stderr}`.trim() };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? 1, output: `${err.stdout ?? ''}${err.stderr ?? ''}`.trim() };
  }
}

describe('systemd unit deploy/aicerine@.service', () => {
  it.skipIf(analyze === null && process.env.CI !== 'true')(
    'passes systemd-analyze verify without a word',
    async () => {
      expect(
        analyze,
        "systemd-analyze is missing: install Debian's systemd (.ci/apt-packages.txt)",
      ).not.toBeNull();
      expect(await verify(UNIT, 'aicerine')).toEqual({ code: 0, output: '' });
      // The check is real: a misspelt key or a bad value is reported.
      const broken = await verify(
        UNIT.replace('KillSignal=', 'KilSignal=').replace('RestrictRealtime=yes', 'RestrictRealtime=maybe'),
        'broken',
      );
      expect(broken.output).toMatch(/Unknown key 'KilSignal'/);
      expect(broken.output).toMatch(/Failed to parse boolean value/);
    },
  );

  it('runs serve on the instance configuration as an unprivileged user, handing over on SIGTERM', () => {
    expect(UNIT).toMatch(/^ExecStart=\/usr\/bin\/aicerine serve --config \/etc\/aicerine\/%i\.yaml$/m);
    expect(UNIT).toMatch(/^User=aicerine$/m);
    expect(UNIT).toMatch(/^KillSignal=SIGTERM$/m);
    expect(UNIT).toMatch(/^Restart=on-failure$/m);
  });
});

describe('container image deploy/Containerfile', () => {
  it('copies what the package ships, runs as its own user and starts serve', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      files: string[];
      engines: { node: string };
    };
    const finalStage = CONTAINERFILE.slice(CONTAINERFILE.lastIndexOf('\nFROM '));
    for (const f of pkg.files.filter((x) => x !== 'README.md'))
      expect(finalStage, `the image lacks ${f}`).toMatch(new RegExp(`COPY --from=build /src/${f} `));
    for (const m of CONTAINERFILE.matchAll(/^COPY (?!--from)(.+) \S+$/gm))
      for (const src of m[1]!.split(' ')) expect(existsSync(join(ROOT, src)), `COPY ${src}`).toBe(true);
    const major = /(\d+)/.exec(pkg.engines.node)![1];
    for (const m of CONTAINERFILE.matchAll(/^FROM (\S+)/gm))
      expect(m[1]).toMatch(new RegExp(`node:${major}-`));
    expect(finalStage).toMatch(/^USER aicerine$/m);
    expect(finalStage).toMatch(/^ENTRYPOINT \["node", "\/opt\/aicerine\/bin\/aicerine\.js"\]$/m);
    expect(finalStage).toMatch(/^CMD \["serve", "--config", "\/etc\/aicerine\/aicerine\.yaml"\]$/m);
  });
});
