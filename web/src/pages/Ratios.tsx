// Prevention: each host's VCPU allocation ratio now, and the ratio changes that set it, with their
// reasons.
import { get } from '../api.js';
import { time } from '../format.js';
import { usePoll } from '../poll.js';
import type { Aggregate, HostsPage, Page, RatioChange } from '../types.js';
import { Failure, Loading } from './common.js';

interface HostRatio {
  aggregate: string;
  host: string;
  ratio: number | null;
  vcpu: { used: number; capacity: number } | undefined;
}

async function hostRatios(): Promise<HostRatio[]> {
  const aggs = (await get<Page<Aggregate>>('/v1/aggregates?limit=1000')).items;
  const pages = await Promise.all(
    aggs.map(async (a) => ({
      a: a.name,
      page: await get<HostsPage>(`/v1/aggregates/${encodeURIComponent(a.name)}/hosts?limit=1000`),
    })),
  );
  return pages.flatMap(({ a, page }) =>
    page.items.map((h) => ({
      aggregate: a,
      host: h.name,
      ratio: h.vcpuAllocationRatio,
      vcpu: h.allocation.VCPU,
    })),
  );
}

export function Ratios() {
  const hosts = usePoll('ratios:hosts', hostRatios, 5000);
  const changes = usePoll('ratios:changes', () => get<Page<RatioChange>>('/v1/ratio-changes?limit=200'));
  return (
    <>
      <section className="card">
        <h2>VCPU allocation ratio per host</h2>
        {hosts.error ? (
          <Failure message={hosts.error} />
        ) : hosts.data === null ? (
          <Loading />
        ) : (
          <table>
            <thead>
              <tr>
                <th>aggregate</th>
                <th>host</th>
                <th>VCPU ratio</th>
                <th>VCPU allocated</th>
              </tr>
            </thead>
            <tbody>
              {hosts.data.map((h) => (
                <tr key={`${h.aggregate}/${h.host}`} data-host={h.host}>
                  <td>{h.aggregate}</td>
                  <td>{h.host}</td>
                  <td>{h.ratio ?? '-'}</td>
                  <td>{h.vcpu ? `${h.vcpu.used} of ${h.vcpu.capacity}` : '-'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section className="card">
        <h2>Ratio changes</h2>
        {changes.error ? (
          <Failure message={changes.error} />
        ) : changes.data === null ? (
          <Loading />
        ) : changes.data.items.length === 0 ? (
          <p className="muted">Prevention has not changed any ratio.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>at</th>
                <th>host</th>
                <th>resource</th>
                <th>ratio</th>
                <th>reason</th>
                <th>by</th>
              </tr>
            </thead>
            <tbody>
              {changes.data.items.map((c) => (
                <tr key={c.id}>
                  <td>{time(c.at)}</td>
                  <td>{c.host}</td>
                  <td>{c.resourceClass}</td>
                  <td>
                    {c.oldRatio} → {c.newRatio}
                  </td>
                  <td>{c.reason}</td>
                  <td>{c.by}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
