// The store's SQLite journal keeps the same contract as the in-memory one the executor's tests
// use, so what those tests prove holds on the durable journal too.
import { openStore } from '../../src/store/index.js';
import { describeJournalContract } from './journal-contract.js';

describeJournalContract('store (SQLite)', () => openStore({ kind: 'sqlite', path: ':memory:' }));
