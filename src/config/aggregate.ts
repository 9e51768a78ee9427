// The settings an aggregate runs with: its own entry merged over the defaults, or the defaults
// alone when the configuration does not list it (a new aggregate appears in Nova).

import { own } from '../util/maps.js';
import type { AggregateConfig, ServiceConfig } from './types.js';

export function aggregateConfig(config: ServiceConfig, name: string): AggregateConfig {
  return own(config.aggregates, name) ?? { ...config.defaults, name };
}
