// What `pause` and `resume` print: the pause state the API answers with, one row per scope.
import { formatTable, printJsonOr } from './api-client.js';

interface PauseRuntime {
  by: string;
  at: string;
  reason: string | null;
}

export interface Pauses {
  global: { configured: boolean; runtime: PauseRuntime | null };
  aggregates: { name: string; configured: boolean; runtime: PauseRuntime | null }[];
}

const row = (scope: string, configured: boolean, runtime: PauseRuntime | null) => [
  scope,
  configured ? 'paused' : '-',
  runtime?.by ?? null,
  runtime?.at ?? null,
  runtime?.reason ?? null,
];

export function printPauses(json: boolean | undefined, p: Pauses): void {
  printJsonOr(json, p, () =>
    formatTable(
      ['SCOPE', 'CONFIG', 'PAUSED BY', 'AT', 'REASON'],
      [
        row('(global)', p.global.configured, p.global.runtime),
        ...p.aggregates.map((a) => row(a.name, a.configured, a.runtime)),
      ],
    ),
  );
}
