// Pause and resume, globally or per aggregate, through the service's control port. A pause set in
// the configuration file stays: resume lifts run-time pauses only, and says so.
import type { ServiceConfig } from '../../config/types.js';
import { own } from '../../util/maps.js';
import { type ApiContext, actorOf, type ZodApp } from '../context.js';
import type { PauseScope, PauseState } from '../control.js';
import { ApiError, notFound } from '../errors.js';
import { aggregateParams, errorBody, pauseBody, pauseView } from '../schemas.js';

export function pausesView(config: ServiceConfig, state: PauseState) {
  return {
    global: { configured: config.paused, runtime: state.global },
    aggregates: Object.keys(config.aggregates)
      .sort()
      .map((name) => ({
        name,
        configured: config.aggregates[name]!.paused,
        runtime: own(state.aggregates, name) ?? null,
      })),
  };
}

export function registerPauses(app: ZodApp, ctx: ApiContext): void {
  const known = (name: string) => {
    if (own(ctx.config.aggregates, name) === undefined)
      throw notFound(`aggregate ${name} (not in the configuration)`, 'params.name', name);
  };

  app.get(
    '/v1/pauses',
    {
      config: { action: 'read' },
      schema: { tags: ['pauses'], summary: 'What is paused, and by whom', response: { 200: pauseView } },
    },
    async () => pausesView(ctx.config, await ctx.control.pauses()),
  );

  const act = (verb: 'pause' | 'resume', perAggregate: boolean) =>
    app.post(
      perAggregate ? `/v1/aggregates/:name/${verb}` : `/v1/${verb}`,
      {
        config: { action: verb },
        schema: {
          tags: ['pauses'],
          summary:
            verb === 'pause'
              ? `Pause ${perAggregate ? 'one aggregate' : 'every aggregate'}: no new migration starts`
              : `Lift the run-time pause of ${perAggregate ? 'one aggregate' : 'the whole service'}`,
          ...(perAggregate ? { params: aggregateParams } : {}),
          body: pauseBody.nullish(),
          response: { 200: pauseView, 404: errorBody, 409: errorBody },
        },
      },
      async (req) => {
        const name = perAggregate ? (req.params as { name: string }).name : undefined;
        if (name !== undefined) known(name);
        const scope: PauseScope = name === undefined ? {} : { aggregate: name };
        const who = actorOf(req);
        const reason = req.body?.reason ?? null;
        if (verb === 'pause') await ctx.control.pause(scope, who.actor, reason);
        else {
          const lifted = await ctx.control.resume(scope, who.actor);
          const configured =
            name === undefined ? ctx.config.paused : own(ctx.config.aggregates, name)!.paused;
          if (!lifted)
            throw new ApiError(
              409,
              'conflict',
              configured
                ? `${name ?? 'the service'} is paused in the configuration (${name === undefined ? 'paused' : `aggregates.${name}.paused`}); change the file to resume`
                : `${name ?? 'the service'} is not paused`,
            );
        }
        await ctx.store.audit.record({
          ...who,
          action: verb,
          target: name === undefined ? 'service' : `aggregate:${name}`,
          detail: { reason },
          at: ctx.now().toISOString(),
        });
        return pausesView(ctx.config, await ctx.control.pauses());
      },
    );
  act('pause', false);
  act('resume', false);
  act('pause', true);
  act('resume', true);
}
