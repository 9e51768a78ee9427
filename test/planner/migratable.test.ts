import { describe, expect, it } from 'vitest';
import { whyNotMigratable } from '../../src/planner/migratable.js';
import { type ServerSpec, server } from '../fixtures/cluster.js';

describe('whyNotMigratable (formats.md guarantee 5)', () => {
  it.each([
    { name: 'plain ACTIVE server moves', spec: {}, why: null },
    { name: 'SHUTOFF', spec: { status: 'SHUTOFF' }, why: /not ACTIVE/ },
    { name: 'task state', spec: { taskState: 'resize_prep' }, why: /task state/ },
    { name: 'opt-out metadata', spec: { metadata: { 'aicerine:exclude': 'true' } }, why: /opted out/ },
    { name: 'opt-out metadata other value', spec: { metadata: { 'aicerine:exclude': 'false' } }, why: null },
    {
      name: 'held by the loop',
      spec: { metadata: { 'aicerine:hold': 'cooldown until noon' } },
      why: /held by Aicerine: cooldown until noon/,
    },
    { name: 'empty hold is no hold', spec: { metadata: { 'aicerine:hold': '' } }, why: null },
    { name: 'local storage', spec: { sharedStorage: false }, why: /local storage/ },
    { name: 'SR-IOV port', spec: { sriov: true }, why: /SR-IOV/ },
    { name: 'PCI passthrough', spec: { extraSpecs: { 'pci_passthrough:alias': 'gpu:1' } }, why: /PCI/ },
    { name: 'dedicated CPUs', spec: { extraSpecs: { 'hw:cpu_policy': 'dedicated' } }, why: /dedicated/ },
    { name: 'shared CPU policy is fine', spec: { extraSpecs: { 'hw:cpu_policy': 'shared' } }, why: null },
    { name: 'NUMA', spec: { extraSpecs: { 'hw:numa_nodes': '2' } }, why: /NUMA/ },
    { name: 'huge pages', spec: { extraSpecs: { 'hw:mem_page_size': 'large' } }, why: /huge pages/ },
    { name: 'vGPU', spec: { extraSpecs: { 'resources:VGPU': '1' } }, why: /vGPU/ },
    { name: 'PCI resource class', spec: { extraSpecs: { 'resources:PCI_NIC': '1' } }, why: /PCI device/ },
    {
      name: 'required SR-IOV trait',
      spec: { extraSpecs: { 'trait:CUSTOM_SRIOV_NIC': 'required' } },
      why: /SR-IOV trait/,
    },
    {
      name: 'forbidden SR-IOV trait is fine',
      spec: { extraSpecs: { 'trait:CUSTOM_SRIOV_NIC': 'forbidden' } },
      why: null,
    },
  ])('$name', ({ spec, why }) => {
    const r = whyNotMigratable(server('s', 'a', spec as ServerSpec), true);
    if (why === null) expect(r).toBeNull();
    else expect(r).toMatch(why);
  });
  it('a server on a down host cannot be live-migrated', () => {
    expect(whyNotMigratable(server('s', 'a'), false)).toMatch(/down/);
  });
});
