// The observe-mode shadow report: over a period (a day by default), what Aicerine would have
// done against what happened in the cloud meanwhile. It lets an operator judge the balancer on
// their own cloud before giving it the keys: would it have moved much, would it have helped, and
// did people (or Nova) move servers it would have moved anyway. Pure.
import type { AggregatePlan } from '../model/plan.js';
import type { MigrationRecord } from '../model/snapshot.js';

export interface ShadowPlan {
  at: string;
  plan: AggregatePlan;
}

export interface ShadowInput {
  aggregate: string;
  from: string;
  to: string;
  /** Plans the loop made (and did not execute) in the period, oldest first. */
  plans: ShadowPlan[];
  /** Live migrations that happened in the cloud in the period (not Aicerine's), from os-migrations. */
  migrations: MigrationRecord[];
  /** Hosts of the aggregate, to tell its migrations from others'. */
  hosts: ReadonlySet<string>;
  /** The aggregate's measured imbalance at the start and at the end of the period, when known. */
  imbalanceAtStart: number | null;
  imbalanceAtEnd: number | null;
}

export interface ShadowReport {
  aggregate: string;
  from: string;
  to: string;
  plansMade: number;
  /** Distinct servers any plan of the period would have moved, and the moves of the latest plan. */
  serversWouldMove: number;
  movesInLatestPlan: number;
  /** Imbalance the latest plan promised (before → after). */
  latestPromise: { before: number; after: number } | null;
  /** What the cloud did on its own. */
  migrationsInCloud: number;
  serversMovedInCloud: number;
  /** Servers both Aicerine would have moved and somebody did move. */
  overlap: number;
  imbalanceAtStart: number | null;
  imbalanceAtEnd: number | null;
  /** Lines for people. */
  summary: string[];
}

const r4 = (x: number) => Math.round(x * 10000) / 10000;

export function shadowReport(input: ShadowInput): ShadowReport {
  const wouldMove = new Set<string>();
  for (const p of input.plans) for (const m of p.plan.moves) wouldMove.add(m.server);
  const latest = input.plans.at(-1)?.plan ?? null;
  const inPeriod = input.migrations.filter(
    (m) =>
      m.finishedAt >= input.from &&
      m.finishedAt < input.to &&
      (input.hosts.has(m.source) || input.hosts.has(m.dest)),
  );
  const movedInCloud = new Set(inPeriod.map((m) => m.serverId));
  let overlap = 0;
  for (const s of movedInCloud) if (wouldMove.has(s)) overlap++;

  const summary: string[] = [];
  summary.push(
    `${input.plans.length} plan(s) made; ${wouldMove.size} distinct server(s) would have moved` +
      (latest ? `, ${latest.moves.length} in the latest plan` : ''),
  );
  if (latest && latest.moves.length > 0)
    summary.push(
      `the latest plan promised imbalance ${r4(latest.before.imbalance)} -> ${r4(latest.after.imbalance)}`,
    );
  summary.push(
    `the cloud itself made ${inPeriod.length} live migration(s) touching this aggregate (${movedInCloud.size} server(s)), ${overlap} of which Aicerine would also have moved`,
  );
  if (input.imbalanceAtStart !== null && input.imbalanceAtEnd !== null)
    summary.push(
      `measured imbalance went ${r4(input.imbalanceAtStart)} -> ${r4(input.imbalanceAtEnd)} without Aicerine acting`,
    );

  return {
    aggregate: input.aggregate,
    from: input.from,
    to: input.to,
    plansMade: input.plans.length,
    serversWouldMove: wouldMove.size,
    movesInLatestPlan: latest?.moves.length ?? 0,
    latestPromise: latest ? { before: latest.before.imbalance, after: latest.after.imbalance } : null,
    migrationsInCloud: inPeriod.length,
    serversMovedInCloud: movedInCloud.size,
    overlap,
    imbalanceAtStart: input.imbalanceAtStart,
    imbalanceAtEnd: input.imbalanceAtEnd,
    summary,
  };
}
