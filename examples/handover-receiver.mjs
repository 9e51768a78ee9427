#!/usr/bin/env node
// A receiver of Aicerine's maintenance hand-over webhook (docs/maintenance.md, "Hand over"): it
// runs the operator's action once per hand-over, however many times the hand-over is delivered.
//
// Aicerine delivers a hand-over at least once: a service killed after POSTing it and before
// writing the answer POSTs it again when it resumes, with the same id (in the body and as the
// Idempotency-Key header). So this receiver keeps the ids it has acted on in a state file (which
// survives its own restarts), answers a delivery it has seen with 200 without acting again, and
// makes a delivery that comes while the first one's action still runs wait for that same action.
// An id is kept only once its action succeeded: a failed action answers 500, and the next
// delivery runs it again (Aicerine records the failure and sends again only after a crash).
//
//   node examples/handover-receiver.mjs [--port 8080] [--host 127.0.0.1]
//        [--state handover-receiver.json] [-- ACTION ARG...]
//
// ACTION runs without a shell, with AICERINE_EVENT, AICERINE_HANDOVER_ID, AICERINE_CAMPAIGN,
// AICERINE_AGGREGATE, AICERINE_HOST and AICERINE_RETURN_WHEN in its environment (the same as
// `maintenance.command`). Keep it short (Aicerine waits 30 s for the answer): queue the
// patch-and-reboot job in your automation, don't run it here. Without ACTION, hand-overs are only
// logged. One line on stdout per delivery: `delivery <id> new|duplicate|failed <host>`; the first
// line is `listening <url>`.

import { execFile } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';

function parseArgs(argv) {
  const opts = { port: 8080, host: '127.0.0.1', state: 'handover-receiver.json', action: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      opts.action = argv.slice(i + 1);
      break;
    }
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${a}: a value is missing`);
    if (a === '--port') opts.port = Number(value);
    else if (a === '--host') opts.host = value;
    else if (a === '--state') opts.state = value;
    else throw new Error(`unknown option ${a} (expected --port, --host, --state or -- ACTION)`);
    i++;
  }
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535)
    throw new Error(`--port: expected a port number, got ${opts.port}`);
  return opts;
}

const opts = parseArgs(process.argv.slice(2));

/** Ids whose action succeeded, kept across restarts. */
const done = new Set(existsSync(opts.state) ? JSON.parse(readFileSync(opts.state, 'utf8')).done : []);
/** Actions running now, by id: a second delivery waits for the first one's. */
const running = new Map();

function remember(id) {
  done.add(id);
  // Written aside and renamed: a crash leaves the old state or the new one, never half of one.
  writeFileSync(`${opts.state}.tmp`, JSON.stringify({ done: [...done] }));
  renameSync(`${opts.state}.tmp`, opts.state);
}

function act(event) {
  if (opts.action.length === 0) return Promise.resolve();
  const [file, ...args] = opts.action;
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      {
        timeout: 25_000,
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
        if (err === null) resolve();
        else reject(new Error(`${err.message.trim()} ${`${stdout}${stderr}`.trim().slice(-300)}`.trim()));
      },
    );
  });
}

function answer(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** The event, or the reason it is not one (answered 400: Aicerine records it as failed). */
function parseEvent(raw, key) {
  let event;
  try {
    event = JSON.parse(raw);
  } catch {
    return 'the body is not JSON';
  }
  if (event === null || typeof event !== 'object') return 'the body is not a JSON object';
  if (event.event !== 'aicerine.maintenance.ready')
    return `event: expected "aicerine.maintenance.ready", got ${JSON.stringify(event.event)}`;
  for (const field of ['id', 'campaign', 'aggregate', 'host'])
    if (typeof event[field] !== 'string' || event[field] === '')
      return `${field}: expected a non-empty string, got ${JSON.stringify(event[field])}`;
  if (key !== undefined && key !== event.id)
    return `Idempotency-Key ${JSON.stringify(key)} differs from the body's id ${JSON.stringify(event.id)}`;
  return event;
}

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    answer(res, 405, { error: `${req.method} ${req.url}: only POST is accepted` });
    return;
  }
  let raw = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => {
    raw += chunk;
    if (raw.length > 65_536) req.destroy();
  });
  req.on('end', () => {
    const header = req.headers['idempotency-key'];
    const event = parseEvent(raw, Array.isArray(header) ? header.join(',') : header);
    if (typeof event === 'string') {
      answer(res, 400, { error: event });
      return;
    }
    const { id } = event;
    if (done.has(id)) {
      console.log(`delivery ${id} duplicate ${event.host}`);
      answer(res, 200, { id, duplicate: true });
      return;
    }
    let run = running.get(id);
    const first = run === undefined;
    if (run === undefined) {
      run = act(event).then(() => remember(id));
      running.set(id, run);
      void run.then(
        () => running.delete(id),
        () => running.delete(id),
      );
    }
    run.then(
      () => {
        console.log(`delivery ${id} ${first ? 'new' : 'duplicate'} ${event.host}`);
        answer(res, 200, { id, duplicate: !first });
      },
      (err) => {
        console.log(`delivery ${id} failed ${event.host}`);
        answer(res, 500, { error: `the action for ${id} failed: ${err.message}` });
      },
    );
  });
});

server.listen(opts.port, opts.host, () => {
  const { port } = server.address();
  console.log(`listening http://${opts.host}:${port}/`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
