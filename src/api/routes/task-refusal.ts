import { TaskTableUnavailableError } from '../../tasks/service.js';
import { TaskRequestError } from '../../tasks/types.js';
import { ApiError } from '../errors.js';

/**
 * A task or maintenance request the task service refused, as the API answers it: 400/404/409
 * naming the field, 503 when the task table is busy; anything else is not a refusal.
 */
export function answerTaskRefusal(err: unknown): never {
  if (err instanceof TaskRequestError) {
    // The first issue about the request names its field; one about the service's configuration
    // (it has a file) names none: the caller cannot fix it in the request.
    const issue = err.issues.find((i) => i.file === undefined);
    const code = err.status === 404 ? 'not-found' : err.status === 409 ? 'conflict' : 'invalid-field';
    throw new ApiError(
      err.status,
      code,
      err.message,
      issue ? `body.${issue.path}` : undefined,
      issue && 'value' in issue ? issue.value : undefined,
    );
  }
  if (err instanceof TaskTableUnavailableError) throw new ApiError(503, 'tasks-busy', err.message);
  throw err;
}
