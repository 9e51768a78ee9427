import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../../src/checker/index.js';
import { codesOf, move, plan, type ServerSpec, threeHosts } from '../fixtures.js';

const moveS1 = (s1: ServerSpec) => {
  const snap = threeHosts({}, { s1 });
  return { snap, plan: plan(snap, { gold: [move(1, 1, 's1', 'h1', 'h3')] }) };
};

const blocked: Array<[string, ServerSpec]> = [
  ['not ACTIVE', { status: 'SHUTOFF' }],
  ['a task state', { taskState: 'migrating' }],
  ['aicerine:exclude = "true"', { metadata: { 'aicerine:exclude': 'true' } }],
  ['local storage', { sharedStorage: false }],
  ['SR-IOV ports', { sriov: true }],
  ['pci_passthrough:alias', { extraSpecs: { 'pci_passthrough:alias': 'a1:1' } }],
  ['hw:cpu_policy=dedicated', { extraSpecs: { 'hw:cpu_policy': 'dedicated' } }],
  ['hw:numa_nodes', { extraSpecs: { 'hw:numa_nodes': '2' } }],
  ['hw:mem_page_size', { extraSpecs: { 'hw:mem_page_size': 'large' } }],
  ['resources:VGPU', { extraSpecs: { 'resources:VGPU': '1' } }],
  ['resources:PCI_*', { extraSpecs: { 'resources:PCI_DEVICE': '1' } }],
  ['a required SR-IOV trait', { extraSpecs: { 'trait:HW_NIC_SRIOV': 'required' } }],
];

const allowed: Array<[string, ServerSpec]> = [
  ['hw:cpu_policy=shared', { extraSpecs: { 'hw:cpu_policy': 'shared' } }],
  ['a forbidden SR-IOV trait', { extraSpecs: { 'trait:HW_NIC_SRIOV': 'forbidden' } }],
  ['another required trait', { extraSpecs: { 'trait:HW_CPU_X86_AVX2': 'required' } }],
  ['aicerine:exclude = "false"', { metadata: { 'aicerine:exclude': 'false' } }],
  ['sriov: false', { sriov: false }],
  ['other resources', { extraSpecs: { 'resources:CUSTOM_GOLD': '1' } }],
];

describe('migratability (guarantee 5)', () => {
  it.each(blocked)('a server with %s is never moved', (_, spec) => {
    expect(codesOf(moveS1(spec))).toEqual(['not-migratable']);
  });

  it.each(allowed)('a server with %s may move', (_, spec) => {
    expect(codesOf(moveS1(spec))).toEqual([]);
  });

  it('lists every reason in one violation', () => {
    const { snap, plan: p } = moveS1({ status: 'ERROR', sharedStorage: false });
    const { violations } = checkPlan(snap, p);
    expect(violations).toHaveLength(1);
    expect(violations[0]?.detail).toBe(
      'server vm-s1 (s1) must not be moved: status is ERROR; uses local storage',
    );
  });
});
