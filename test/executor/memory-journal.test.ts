import { MemoryJournal } from '../../src/executor/memory-journal.js';
import { describeJournalContract } from './journal-contract.js';

describeJournalContract('MemoryJournal', async () => new MemoryJournal());
