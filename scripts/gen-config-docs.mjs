// Writes docs/configuration.md from the configuration schema (after `npm run build`).
import { writeFileSync } from 'node:fs';
import { configReference } from '../dist/config/reference.js';

writeFileSync(new URL('../docs/configuration.md', import.meta.url), configReference());
process.stdout.write('wrote docs/configuration.md\n');
