// Shadow reports: what Aicerine would have done in observe mode, next to what the cloud did.
import { get } from '../api.js';
import { num, time } from '../format.js';
import { usePoll } from '../poll.js';
import type { Page, ShadowReport, ShadowReportEntry } from '../types.js';
import { Failure, Loading } from './common.js';

function isShadowReport(r: unknown): r is ShadowReport {
  return (
    typeof r === 'object' &&
    r !== null &&
    Array.isArray((r as { summary?: unknown }).summary) &&
    typeof (r as { plansMade?: unknown }).plansMade === 'number'
  );
}

export function ShadowReports() {
  const list = usePoll('shadow', () => get<Page<ShadowReportEntry>>('/v1/shadow-reports?limit=50'), 5000);
  if (list.error) return <Failure message={list.error} />;
  if (list.data === null) return <Loading />;
  if (list.data.items.length === 0)
    return (
      <p className="muted">No shadow report yet (the service writes one a day per observed aggregate).</p>
    );
  return (
    <>
      {list.data.items.map((e) => (
        <section key={e.id} className="card">
          <h2>
            {e.aggregate} · {time(e.at)}
          </h2>
          {isShadowReport(e.report) ? (
            <>
              <p>
                {time(e.report.from)} to {time(e.report.to)}: {e.report.plansMade} plans,{' '}
                {e.report.serversWouldMove} servers would have moved, the cloud moved{' '}
                {e.report.serversMovedInCloud} ({e.report.overlap} the same); imbalance{' '}
                {e.report.imbalanceAtStart === null ? '-' : num(e.report.imbalanceAtStart)} →{' '}
                {e.report.imbalanceAtEnd === null ? '-' : num(e.report.imbalanceAtEnd)}
                {e.report.latestPromise && (
                  <>
                    ; the latest plan promised {num(e.report.latestPromise.before)} →{' '}
                    {num(e.report.latestPromise.after)}
                  </>
                )}
                .
              </p>
              <ul>
                {e.report.summary.map((s) => (
                  <li key={s}>{s}</li>
                ))}
              </ul>
            </>
          ) : (
            <pre>{JSON.stringify(e.report, null, 2)}</pre>
          )}
        </section>
      ))}
    </>
  );
}
