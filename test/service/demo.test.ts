// `aicerine demo` end to end, as a user runs it (the built CLI in a child process): the dashboard
// URL first, one line per aggregate and cycle, the API answering during the run, migrations
// completed in the active aggregate, the assisted plan waiting for approval until an operator
// approves it through the API, then executed and the hot host evened out.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';

const CLI = join(resolve(import.meta.dirname, '../..'), 'bin', 'aicerine.js');

interface Page<T> {
  items: T[];
}

describe('aicerine demo', () => {
  it('runs the service on the simulator, serves the API, and acts by mode until --cycles', async () => {
    const child = spawn(process.execPath, [CLI, 'demo', '--cycles', '8', '--interval', '2', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    const lines: string[] = [];
    const waiters: { test: (l: string) => boolean; resolve: (l: string) => void }[] = [];
    createInterface({ input: child.stdout }).on('line', (l) => {
      lines.push(l);
      for (const w of [...waiters])
        if (w.test(l)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(l);
        }
    });
    const lineMatching = (re: RegExp) =>
      new Promise<string>((res, rej) => {
        const found = lines.find((l) => re.test(l));
        if (found !== undefined) return res(found);
        waiters.push({ test: (l) => re.test(l), resolve: res });
        void exited.then(() =>
          rej(new Error(`demo ended without a line matching ${re}\n${lines.join('\n')}\n${stderr}`)),
        );
      });
    try {
      const first = await lineMatching(/./);
      const url = /^Dashboard: (http:\/\/127\.0\.0\.1:\d+)\/ /.exec(first)?.[1];
      expect(url, first).toBeDefined();
      const get = async <T>(path: string): Promise<T> => {
        const res = await fetch(`${url}${path}`);
        expect(res.status, path).toBe(200);
        return (await res.json()) as T;
      };
      // Cycle 1: the active aggregate migrated, the assisted one waits for approval.
      const active1 = await lineMatching(/^cycle +1 +agg-1 +active/);
      expect(Number(/executed +(\d+)/.exec(active1)?.[1])).toBeGreaterThan(0);
      expect(await lineMatching(/^cycle +1 +agg-2 +assisted/)).toMatch(
        /planned +[1-9]\d* +executed +0 .*awaiting approval/,
      );
      expect(await lineMatching(/^cycle +1 +agg-3 +observe/)).toMatch(/executed +0 .*observe mode/);
      expect(stderr).toMatch(/NO AUTHENTICATION/);

      // The API answers during the run.
      const aggregates = await get<Page<{ name: string; mode: string }>>('/v1/aggregates');
      expect(aggregates.items.map((a) => [a.name, a.mode])).toEqual([
        ['agg-1', 'active'],
        ['agg-2', 'assisted'],
        ['agg-3', 'observe'],
      ]);
      const who = await get<{ mode: string; actions: string[] }>('/v1/whoami');
      expect(who.mode).toBe('no-auth');
      const hot = /hot host (\S+):/.exec(lines[1] ?? '')?.[1] ?? 'no hot host named';
      const hostsBefore = await get<Page<{ name: string; utilization: { memory: number } }>>(
        '/v1/aggregates/agg-2/hosts',
      );
      const hotBefore = hostsBefore.items.find((h) => h.name === hot)!.utilization.memory;
      expect(hotBefore).toBe(Math.max(...hostsBefore.items.map((h) => h.utilization.memory)));
      const executions = await get<Page<{ aggregate: string; state: string }>>(
        '/v1/executions?aggregate=agg-1',
      );
      expect(executions.items.length).toBeGreaterThan(0);

      // An operator approves the assisted plan: the next cycle executes it and the hot host cools.
      const proposed = await get<Page<{ id: string; moveCount: number }>>(
        '/v1/plans?aggregate=agg-2&status=proposed',
      );
      expect(proposed.items).toHaveLength(1);
      const approve = await fetch(`${url}/v1/plans/${proposed.items[0]!.id}/approve`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ comment: 'demo test' }),
      });
      expect(approve.status).toBe(200);
      const done = await lineMatching(/^cycle +\d +agg-2 +assisted +planned +\d+ +executed +[1-9]/);
      expect(done).toBeDefined();
      // Host figures come from the snapshot of each cycle's start: the hot host cools within a
      // few, checked as each later cycle of agg-2 ends (before the eighth, after which the
      // process exits).
      const executedIn = Number(/^cycle +(\d+)/.exec(done)?.[1]);
      let hotAfter = hotBefore;
      for (let c = executedIn + 1; c < 8 && hotAfter >= hotBefore - 0.15; c++) {
        await lineMatching(new RegExp(`^cycle +${c} +agg-2 `));
        const hosts = await get<Page<{ name: string; utilization: { memory: number } }>>(
          '/v1/aggregates/agg-2/hosts',
        );
        hotAfter = hosts.items.find((h) => h.name === hot)!.utilization.memory;
      }
      expect(hotAfter).toBeLessThan(hotBefore - 0.15);
      // The observe aggregate does not store the same plan every cycle: a cycle whose inputs
      // did not change says since which plan, in its line and in the history.
      const observed = await lineMatching(/^cycle +\d+ +agg-3 +observe .*unchanged since plan \d+/);
      const cyclesSoFar = lines.filter((l) => /^cycle +\d+ +agg-3 /.test(l)).length;
      const plans3 = await get<Page<{ id: string }>>('/v1/plans?aggregate=agg-3');
      expect(plans3.items.length, observed).toBeLessThan(cyclesSoFar);
      const history = await get<Page<{ unchanged?: boolean; planId?: string | null }>>(
        '/v1/aggregates/agg-3/history',
      );
      const kept = history.items.find((p) => p.unchanged === true);
      expect(plans3.items.map((p) => p.id)).toContain(kept?.planId);
      expect(await exited).toBe(0);
      // --cycles 8: eight lines per aggregate, then the process ends on its own.
      expect(lines.filter((l) => /^cycle /.test(l))).toHaveLength(24);
    } finally {
      child.kill('SIGKILL');
    }
  }, 120_000);
});
