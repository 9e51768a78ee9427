// The validation kinds as the task registry holds them: one requestable kind, one internal
// follow-up, each parsing its own arguments.
import { describe, expect, it } from 'vitest';
import { TaskRegistry } from '../../src/tasks/registry.js';
import {
  parseValidateArgs,
  VALIDATE_CLEANUP_KIND,
  VALIDATE_KIND,
  validationTaskHandlers,
} from '../../src/validation/handler.js';
import { batchNames, disabledReason } from '../../src/validation/names.js';

describe('validation task kinds', () => {
  it('register as one requestable kind and one internal clean-up', () => {
    const registry = new TaskRegistry([...validationTaskHandlers()]);
    expect(registry.kinds()).toEqual([VALIDATE_KIND, VALIDATE_CLEANUP_KIND]);
    expect(registry.requestable().map((h) => h.kind)).toEqual([VALIDATE_KIND]);
    expect(registry.get(VALIDATE_CLEANUP_KIND)?.parse({})).toEqual({});
    expect(() => registry.get(VALIDATE_CLEANUP_KIND)?.parse({ x: 1 })).toThrow(/expected no arguments/);
  });

  it('parses a request, keepEnabled false when absent', () => {
    expect(parseValidateArgs({ hosts: ['compute-1.rack2', 'c_2'] })).toEqual({
      hosts: ['compute-1.rack2', 'c_2'],
      keepEnabled: false,
    });
    expect(() => parseValidateArgs('compute1')).toThrow(/expected a mapping/);
  });

  it('names batch resources from the configured names and the batch id', () => {
    const n = batchNames({ projectName: 'val', aggregateName: 'agg', traitName: 'CUSTOM_VAL' }, '7f3a-b.c');
    expect(n).toMatchObject({
      project: 'val-7f3a-b-c',
      aggregate: 'agg-7f3a-b-c',
      trait: 'CUSTOM_VAL_7F3A_B_C',
      flavor: 'val-7f3a-b-c-canary',
    });
    expect(n.canary('compute9')).toBe('val-7f3a-b-c-compute9');
  });

  it("keeps a disabled reason within Nova's 255 characters, prefixed", () => {
    const r = disabledReason(`failed: ${'x'.repeat(400)}`);
    expect(r).toHaveLength(255);
    expect(r.startsWith('aicerine-validate: failed: xxx')).toBe(true);
    expect(disabledReason('failed: a\n  b')).toBe('aicerine-validate: failed: a b');
  });
});
