import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { register } from '../../../src/cli/commands/demo.js';
import { register as registerSim } from '../../../src/cli/commands/sim.js';
import { runCommand } from '../../fixtures/cli.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('aicerine demo', () => {
  it('simulates a cloud, records it through the APIs, and prints a plan with reasons', async () => {
    const { out } = await runCommand([register], ['demo', '--plan-only', '--synth', '12,240,8,5,2,1']);
    expect(out).toMatch(
      /Simulated cloud at http:\/\/127\.0\.0\.1:\d+: 12 hosts in 2 aggregates, 240 servers, 8 server groups/,
    );
    expect(out).toContain('Recorded through the OpenStack APIs: 12 hosts, 240 servers, 8 server groups');
    expect(out).toContain('Plan (spread)');
    // The disabled host is drained, and the plan says why.
    expect(out).toMatch(/is disabled \(maintenance\)/);
    expect(out).toContain('aicerine demo --plan-only --keep');
  });

  it('prints the plan document with --json', async () => {
    const { out } = await runCommand(
      [register],
      ['demo', '--plan-only', '--synth', '8,120,4,6,2,1', '--json'],
    );
    const json = out.slice(out.indexOf('\n{') + 1, out.indexOf('\nDone in'));
    const plan = JSON.parse(json) as { format: string; aggregates: { moves: unknown[] }[] };
    expect(plan.format).toBe('aicerine-plan/1');
    expect(plan.aggregates.length).toBeGreaterThan(0);
  });

  it('refuses a bad option before starting anything', async () => {
    const program = new Command().exitOverride();
    register(program);
    registerSim(program);
    await expect(
      program.parseAsync(['demo', '--plan-only', '--port', 'x'], { from: 'user' }),
    ).rejects.toThrow('--port: expected an integer from 0 to 65535, got "x"');
    await expect(program.parseAsync(['sim', '--synth', '1,2'], { from: 'user' })).rejects.toThrow(
      /groups is missing/,
    );
  });
});
