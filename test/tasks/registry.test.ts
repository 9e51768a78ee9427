import { describe, expect, it } from 'vitest';
import { TaskRegistry } from '../../src/tasks/registry.js';
import type { TaskHandler } from '../../src/tasks/types.js';

interface EchoArgs {
  word: string;
}

const echo: TaskHandler<EchoArgs, { said: number }> = {
  kind: 'echo',
  description: 'says a word',
  parse: (raw) => ({ word: String((raw as { word?: unknown }).word) }),
  preflight: async (args) => [{ kind: 'echo', args: { word: args.word }, hosts: [] }],
  run: async (ctx) => {
    await ctx.checkpoint.save({ said: 1 });
    return ctx.args.word;
  },
};

describe('TaskRegistry', () => {
  it('holds typed handlers by kind and hides internal ones from requests', () => {
    const registry = new TaskRegistry([echo, { ...echo, kind: 'echo-cleanup', internal: true }]);
    expect(registry.get('echo')?.description).toBe('says a word');
    expect(registry.kinds()).toEqual(['echo', 'echo-cleanup']);
    expect(registry.requestable().map((h) => h.kind)).toEqual(['echo']);
    expect(() => registry.register(echo)).toThrow('registered twice');
  });
});
