// The clean-up of a validation batch, after every host of it has finished: the project with all
// it holds (servers first), the private flavor, the aggregate, the trait (off every provider
// first), then the project itself. Each removal accepts "already gone", so it can run again.
import type { ValidationCloud } from './cloud.js';
import type { BatchNames } from './names.js';

export interface BatchCleanupResult {
  servers: string[];
  flavor: string | null;
  aggregate: string | null;
  trait: { name: string; removedFrom: string[] };
  project: string | null;
}

export async function cleanUpBatch(
  deps: {
    cloud: ValidationCloud;
    now(): number;
    sleep(ms: number): Promise<void>;
    pollMs?: number;
    timeoutMs: number;
  },
  names: BatchNames,
): Promise<BatchCleanupResult> {
  const { cloud } = deps;
  const pollMs = deps.pollMs ?? 2000;
  const project = await cloud.findProject(names.project);
  const servers: string[] = [];
  if (project) {
    const mine = await cloud.projectServers(project.id);
    for (const x of mine) {
      await cloud.deleteServer(x.id);
      servers.push(x.id);
    }
    const deadline = deps.now() + deps.timeoutMs;
    for (;;) {
      const left = await cloud.projectServers(project.id);
      if (left.length === 0) break;
      if (deps.now() > deadline) {
        throw new Error(
          `servers of project ${names.project} still exist after ${Math.round(deps.timeoutMs / 1000)} s: ${left.map((x) => `${x.name} (${x.status})`).join(', ')}`,
        );
      }
      for (const x of left.filter((y) => y.status === 'ERROR' && y.taskState === null))
        await cloud.deleteServer(x.id);
      await deps.sleep(pollMs);
    }
  }
  const flavor = await cloud.findFlavor(names.flavor);
  if (flavor) await cloud.deleteFlavor(flavor.id);
  const agg = await cloud.findAggregate(names.aggregate);
  if (agg) await cloud.deleteAggregate(agg);
  const holders = await cloud.providersWithTrait(names.trait);
  for (const rp of holders) await cloud.changeProviderTraits(rp, [], [names.trait]);
  await cloud.deleteTrait(names.trait);
  if (project) await cloud.deleteProject(project.id);
  return {
    servers,
    flavor: flavor ? names.flavor : null,
    aggregate: agg ? names.aggregate : null,
    trait: { name: names.trait, removedFrom: holders },
    project: project ? names.project : null,
  };
}
