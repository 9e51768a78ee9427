import { InputError } from '../errors.js';
import { PLAN_FORMAT, type Plan } from '../model/plan.js';
import { readJsonFile, writeJsonFile } from './json-file.js';
import { planSchema, withSpecWay } from './plan-schema.js';
import { refuseUnknownFormat, toInputIssues } from './schema-helpers.js';

export function parsePlan(doc: unknown, file?: string): Plan {
  refuseUnknownFormat(doc, PLAN_FORMAT, file);
  const result = planSchema.safeParse(doc, { reportInput: true });
  if (!result.success) throw new InputError(toInputIssues(result.error, doc, file).map(withSpecWay));
  return result.data as Plan;
}

export async function readPlan(path: string): Promise<Plan> {
  return parsePlan(await readJsonFile(path), path);
}

export async function writePlan(path: string, plan: Plan): Promise<void> {
  await writeJsonFile(path, plan);
}
