// The hand-over of a host that is empty and disabled: an optional webhook (POST JSON) and an
// optional command (argv, no shell), so the operator's automation can patch and reboot it.
// Neither decides anything: what they answered is recorded on the host, and the campaign then
// waits for `maintenance done HOST` or for nova-compute to restart, as configured.
//
// Each channel's answer is recorded as soon as it comes, on its own: a run cut by a crash sends
// again only the channels whose acknowledgement was not recorded. A crash between a delivery and
// the write of its answer still sends it twice (at least once), with the same id: the receiver
// drops what it has seen (examples/handover-receiver.mjs).

import { execFile } from 'node:child_process';

export interface HandoverEvent {
  event: 'aicerine.maintenance.ready';
  /**
   * The same on every delivery of this host's hand-over in this campaign: a hand-over cut by a
   * crash runs again (at least once), and the receiver drops what it has seen.
   */
  id: string;
  campaign: string;
  aggregate: string;
  host: string;
  at: string;
  /** How the campaign learns the host is back. */
  returnWhen: 'done' | 'service-restart';
  /** The command that says it is back (returnWhen done). */
  doneCommand: string;
}

export interface HandoverOutcome {
  webhook: string | null;
  command: string | null;
}

export type HandoverChannel = keyof HandoverOutcome;

/**
 * An answer that acknowledged the hand-over (`HTTP 2xx`, `exit 0`): that channel is never sent
 * again. A failure, or no recorded answer, is sent again by a resumed run.
 */
export function acknowledged(answer: string | null): boolean {
  return answer !== null && !answer.startsWith('failed');
}

const TIMEOUT_MS = 30_000;
const TAIL = 500;

async function postWebhook(url: string, event: HandoverEvent): Promise<string> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': event.id },
      body: JSON.stringify(event),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const body = (await res.text()).slice(0, TAIL);
    return res.ok ? `HTTP ${res.status}` : `failed: HTTP ${res.status}${body ? `: ${body}` : ''}`;
  } catch (err) {
    return `failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}

function runCommand(argv: string[], event: HandoverEvent): Promise<string> {
  const [file, ...args] = argv;
  if (file === undefined) return Promise.resolve('failed: empty command');
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        timeout: TIMEOUT_MS,
        env: {
          ...process.env,
          AICERINE_EVENT: event.event,
          AICERINE_HANDOVER_ID: event.id,
          AICERINE_CAMPAIGN: event.campaign,
          AICERINE_AGGREGATE: event.aggregate,
          AICERINE_HOST: event.host,
          AICERINE_RETURN_WHEN: event.returnWhen,
        },
      },
      (err, stdout, stderr) => {
        const out = `${stdout}${stderr}`.trim().slice(-TAIL);
        if (err === null) resolve(`exit 0${out ? `: ${out}` : ''}`);
        else {
          const code = typeof err.code === 'number' ? `exit ${err.code}` : err.message;
          resolve(`failed: ${code}${out ? `: ${out}` : ''}`);
        }
      },
    );
  });
}

/** The delivery id of a host's hand-over in a campaign (the webhook's Idempotency-Key). */
export function handoverId(campaign: string, host: string): string {
  return `maintenance-${campaign}-${host}`;
}

/**
 * Sends the hand-over on every configured channel whose earlier answer (`previous`, as recorded)
 * is not an acknowledgement, and records each answer with `record` as soon as it comes, before
 * the other channel's. Returns every channel's answer, the earlier ones included.
 */
export async function handOver(
  settings: { webhook: string | null; command: string[] | null },
  event: HandoverEvent,
  previous: HandoverOutcome,
  record: (channel: HandoverChannel, answer: string) => Promise<void>,
): Promise<HandoverOutcome> {
  const channel = async (
    name: HandoverChannel,
    send: (() => Promise<string>) | null,
  ): Promise<string | null> => {
    if (send === null) return null;
    if (acknowledged(previous[name])) return previous[name];
    const answer = await send();
    await record(name, answer);
    return answer;
  };
  const { webhook: url, command: argv } = settings;
  const [webhook, command] = await Promise.all([
    channel('webhook', url === null ? null : () => postWebhook(url, event)),
    channel('command', argv === null ? null : () => runCommand(argv, event)),
  ]);
  return { webhook, command };
}
