// Forecast figures on an aggregate's card: how wrong the load profiles were, and per host its
// current utilization beside its forecast peak of the next 24 hours and the hour of that peak.
import { pct, time } from '../format.js';
import type { Aggregate, HostsPage } from '../types.js';

export function ForecastSummary(props: { forecast: Aggregate['forecast'] }) {
  const f = props.forecast;
  if (f === null) return null;
  return (
    <div className="forecast-summary" data-testid="forecast">
      Forecast from load profiles: {f.profiledServers} of {f.servers} servers profiled, read{' '}
      {time(f.refreshedAt)}
      {' · '}
      {f.error === null ? (
        <span data-testid="forecast-error">error not measured yet (after the next daily refresh)</span>
      ) : (
        <span data-testid="forecast-error" title={`${time(f.error.from)} to ${time(f.error.to)}`}>
          error {pct(f.error.meanAbsolute)} over {f.error.hours} host-hours
          {f.error.currentLoadAbsolute === undefined
            ? ''
            : ` (current load: ${pct(f.error.currentLoadAbsolute)})`}
        </span>
      )}
    </div>
  );
}

export function ForecastPeaks(props: { hosts: HostsPage['items']; aggregate: string }) {
  const rows = props.hosts.filter((h) => h.forecast !== null);
  if (rows.length === 0) return null;
  const now = (h: HostsPage['items'][number], d: string) => {
    const v = h.utilization[d];
    return v === undefined ? '-' : pct(v);
  };
  return (
    <table className="forecast-peaks" aria-label={`forecast peaks of ${props.aggregate}`}>
      <thead>
        <tr>
          <th>host</th>
          <th>cpu now</th>
          <th>cpu at peak</th>
          <th>memory now</th>
          <th>memory at peak</th>
          <th>peak hour (next 24 h)</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((h) => (
          <tr key={h.name} data-host={h.name}>
            <td>{h.name}</td>
            <td data-testid="now-cpu">{now(h, 'cpu')}</td>
            <td data-testid="peak-cpu">{pct(h.forecast!.cpu)}</td>
            <td>{now(h, 'memory')}</td>
            <td>{pct(h.forecast!.memory)}</td>
            <td data-testid="peak-at" title={time(h.forecast!.at)}>
              {h.forecast!.label}
              {h.forecast!.fellBack > 0 ? ` (${h.forecast!.fellBack} servers on current load)` : ''}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
