import type { ClusterState } from '../state.js';
import { capacity } from './capacity.js';
import { destinationService } from './destination-service.js';
import { hardGroups } from './hard-groups.js';
import { notSource } from './not-source.js';
import { oneWay } from './one-way.js';
import { sameAggregate } from './same-aggregate.js';
import { sameZone } from './same-zone.js';
import type { DestinationConstraint, Rejection } from './types.js';

/** Cheapest first: most candidates fail on service, zone or capacity before the group lookup. */
export const DESTINATION_CONSTRAINTS: readonly DestinationConstraint[] = [
  notSource,
  oneWay,
  destinationService,
  sameAggregate,
  sameZone,
  capacity,
  hardGroups,
];

export function firstRejection(state: ClusterState, server: number, to: number): Rejection | null {
  for (const c of DESTINATION_CONSTRAINTS) {
    const r = c.check(state, server, to);
    if (r !== null) return r;
  }
  return null;
}

export type { DestinationConstraint, Rejection } from './types.js';
