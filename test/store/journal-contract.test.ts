// The executor's journal contract suite (test/executor/journal-contract.ts), run on the store's
// MariaDB journal; test/executor/store-journal.test.ts runs it on SQLite.
import { afterAll, describe } from 'vitest';
import { describeJournalContract } from '../executor/journal-contract.js';
import { openFresh, testBackends } from './backends.js';

const mariadb = testBackends().find((b) => b.name === 'mariadb')!;
const disposers: (() => Promise<void>)[] = [];

describe.skipIf(!mariadb.available)('store on MariaDB', () => {
  afterAll(async () => {
    for (const dispose of disposers) await dispose();
  });
  describeJournalContract('store (MariaDB)', async () => {
    const { store, dispose } = await openFresh(mariadb);
    disposers.push(dispose);
    return store;
  });
});
