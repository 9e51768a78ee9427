// The metrics the simulator exports, as Prometheus would scrape them from node_exporter on each
// compute host and a libvirt exporter, plus direct gauges. Values come from the load model at
// virtual time; counters are integrals of it, so rate() gives the mean load over its window.
import type { ServerLoad } from './load.js';
import type { SimCloud, SimHost, SimServer } from './model.js';
import type { Series, SeriesSource } from './promql.js';

const MiB = 1048576;
/**
 * Load is linear between hourly trace points, so the mean over a window is its midpoint value
 * unless the window spans a step: one sample per half hour of window.
 */
function rateSamples(windowSeconds: number): number {
  return Math.min(48, Math.max(1, Math.ceil(windowSeconds / 1800)));
}

export const METRIC_NAMES = [
  'node_cpu_seconds_total',
  'node_memory_MemTotal_bytes',
  'node_memory_MemAvailable_bytes',
  'libvirt_domain_info_cpu_time_seconds_total',
  'libvirt_domain_info_memory_usage_bytes',
  'libvirt_domain_info_virtual_cpus',
  'aicerine_sim_host_cpu_busy_cores',
  'aicerine_sim_host_memory_used_mb',
  'aicerine_sim_server_cpu_busy_cores',
  'aicerine_sim_server_memory_used_mb',
] as const;

/** A series source for one query evaluation (it memoizes loads by time). */
export function metricsSource(cloud: SimCloud): SeriesSource {
  // One evaluation asks for the same (server, time) many times: cache per time in flat arrays
  // indexed by server order and host index (NaN: not computed yet).
  const byTime = new Map<
    number,
    { sCpu: Float64Array; sMem: Float64Array; hCpu: Float64Array; hMem: Float64Array }
  >();
  const bootSeconds = cloud.clock.nowSeconds() - 86400 * 42;
  const at = (t: number) => {
    let c = byTime.get(t);
    if (!c) {
      c = {
        sCpu: new Float64Array(cloud.servers.length).fill(Number.NaN),
        sMem: new Float64Array(cloud.servers.length).fill(Number.NaN),
        hCpu: new Float64Array(cloud.hosts.length).fill(Number.NaN),
        hMem: new Float64Array(cloud.hosts.length).fill(Number.NaN),
      };
      byTime.set(t, c);
    }
    return c;
  };
  const serverLoad = (s: SimServer, t: number): ServerLoad => {
    const c = at(t);
    if (Number.isNaN(c.sCpu[s.order] as number)) {
      const l = s.status === 'SHUTOFF' ? { cpu: 0, memoryMB: 0 } : cloud.serverLoad(s, t);
      c.sCpu[s.order] = l.cpu;
      c.sMem[s.order] = l.memoryMB;
    }
    return { cpu: c.sCpu[s.order] as number, memoryMB: c.sMem[s.order] as number };
  };
  const hostLoad = (h: SimHost, t: number): ServerLoad => {
    const c = at(t);
    if (Number.isNaN(c.hCpu[h.index] as number)) {
      let cpu = h.baseLoad.cpu;
      let mem = h.baseLoad.memoryMB;
      for (const order of h.servers) {
        const l = serverLoad(cloud.servers[order] as SimServer, t);
        cpu += l.cpu;
        mem += l.memoryMB;
      }
      c.hCpu[h.index] = cpu;
      c.hMem[h.index] = mem;
    }
    return { cpu: c.hCpu[h.index] as number, memoryMB: c.hMem[h.index] as number };
  };
  const meanOver = (f: (t: number) => number, t: number, w: number): number => {
    const n = rateSamples(w);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += f(Math.round(t - (w * (i + 0.5)) / n));
    return sum / n;
  };
  const counter = (f: (t: number) => number): Pick<Series, 'at' | 'rate'> => ({
    rate: (t, w) => meanOver(f, t, w),
    at: (t) => meanOver(f, t, 3600) * (t - bootSeconds),
  });
  const cores = (h: SimHost): number => h.rp.inventories.get('VCPU')?.total ?? 0;
  const memTotal = (h: SimHost): number => h.rp.inventories.get('MEMORY_MB')?.total ?? 0;
  const nodeInstance = (h: SimHost): string => `${h.name}:9100`;

  const eachServer = (make: (s: SimServer) => Series): Series[] =>
    cloud.servers.filter((s) => cloud.hostsByName.has(s.host)).map(make);
  const serverLabels = (s: SimServer): Record<string, string> => ({
    domain: s.instanceName,
    uuid: s.uuid,
    instance: `${s.host}:9177`,
    job: 'libvirt',
  });

  return (name) => {
    switch (name) {
      case 'node_cpu_seconds_total': {
        const out: Series[] = [];
        for (const h of cloud.hosts) {
          const busy = (t: number): number => Math.min(cores(h), hostLoad(h, t).cpu);
          const modes: Record<string, (t: number) => number> = {
            user: (t) => busy(t) * 0.8,
            system: (t) => busy(t) * 0.2,
            idle: (t) => cores(h) - busy(t),
            iowait: () => 0,
            steal: () => 0,
          };
          for (const [mode, f] of Object.entries(modes)) {
            out.push({ labels: { instance: nodeInstance(h), job: 'node', mode }, ...counter(f) });
          }
        }
        return out;
      }
      case 'node_memory_MemTotal_bytes':
        return cloud.hosts.map((h) => ({
          labels: { instance: nodeInstance(h), job: 'node' },
          at: () => memTotal(h) * MiB,
        }));
      case 'node_memory_MemAvailable_bytes':
        return cloud.hosts.map((h) => ({
          labels: { instance: nodeInstance(h), job: 'node' },
          at: (t) => Math.max(0, memTotal(h) - hostLoad(h, t).memoryMB) * MiB,
        }));
      case 'libvirt_domain_info_cpu_time_seconds_total':
        return eachServer((s) => ({ labels: serverLabels(s), ...counter((t) => serverLoad(s, t).cpu) }));
      case 'libvirt_domain_info_memory_usage_bytes':
        return eachServer((s) => ({ labels: serverLabels(s), at: (t) => serverLoad(s, t).memoryMB * MiB }));
      case 'libvirt_domain_info_virtual_cpus':
        return eachServer((s) => ({ labels: serverLabels(s), at: () => s.flavor.vcpus }));
      case 'aicerine_sim_host_cpu_busy_cores':
        return cloud.hosts.map((h) => ({ labels: { host: h.name }, at: (t) => hostLoad(h, t).cpu }));
      case 'aicerine_sim_host_memory_used_mb':
        return cloud.hosts.map((h) => ({ labels: { host: h.name }, at: (t) => hostLoad(h, t).memoryMB }));
      case 'aicerine_sim_server_cpu_busy_cores':
        return eachServer((s) => ({
          labels: { instance_uuid: s.uuid, domain: s.instanceName, host: s.host },
          at: (t) => serverLoad(s, t).cpu,
        }));
      case 'aicerine_sim_server_memory_used_mb':
        return eachServer((s) => ({
          labels: { instance_uuid: s.uuid, domain: s.instanceName, host: s.host },
          at: (t) => serverLoad(s, t).memoryMB,
        }));
      default:
        return [];
    }
  };
}
