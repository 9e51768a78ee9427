// The dashboard: who is calling (login when the service uses Keystone, straight in when it runs
// without authentication), the navigation, the global pause, and the page of the current path.
import { useEffect, useState } from 'react';
import { ActionButton } from './actions.js';
import { ApiFailure, get, storedToken, storeToken, whenUnauthorized } from './api.js';
import { Failure, Loading } from './pages/common.js';
import { Executions } from './pages/Executions.js';
import { Maintenance } from './pages/Maintenance.js';
import { Overview } from './pages/Overview.js';
import { PlanDetail, PlanList } from './pages/Plans.js';
import { Quarantine } from './pages/Quarantine.js';
import { Ratios } from './pages/Ratios.js';
import { ShadowReports } from './pages/Shadow.js';
import { TaskDetail, Tasks } from './pages/Tasks.js';
import { WhatIf } from './pages/WhatIf.js';
import { usePoll } from './poll.js';
import { Link, match, navigate, type Route, useLocation } from './router.js';
import { LoginForm, SessionContext, useCan } from './session.js';
import type { Pauses, WhoAmI } from './types.js';

type Phase =
  | { kind: 'checking' }
  | { kind: 'login'; notice: string | null }
  | { kind: 'in'; who: WhoAmI }
  | { kind: 'down'; message: string };

export function App() {
  const [phase, setPhase] = useState<Phase>({ kind: 'checking' });

  useEffect(() => {
    whenUnauthorized(() => {
      storeToken(null);
      setPhase({ kind: 'login', notice: 'The service no longer accepts your token: log in again.' });
    });
    get<WhoAmI>('/v1/whoami')
      .then((who) => setPhase({ kind: 'in', who }))
      .catch((e: unknown) => {
        if (e instanceof ApiFailure && e.status === 401)
          setPhase({
            kind: 'login',
            notice: storedToken() === null ? null : 'Your session ended: log in again.',
          });
        else setPhase({ kind: 'down', message: e instanceof Error ? e.message : String(e) });
      });
  }, []);

  if (phase.kind === 'checking') return <Loading />;
  if (phase.kind === 'down') return <Failure message={`The service cannot be reached: ${phase.message}`} />;
  if (phase.kind === 'login')
    return (
      <LoginForm
        notice={phase.notice}
        onLogin={(who) => {
          if (window.location.pathname === '/login') navigate('/');
          setPhase({ kind: 'in', who });
        }}
      />
    );
  const logout = () => {
    storeToken(null);
    setPhase({ kind: 'login', notice: null });
  };
  if (!phase.who.actions.includes('read')) return <NoAccess who={phase.who} onLogout={logout} />;
  return (
    <SessionContext.Provider value={phase.who}>
      <Shell who={phase.who} onLogout={logout} />
    </SessionContext.Provider>
  );
}

/**
 * A token Keystone accepted whose roles do not read the cloud (a project's member or reader):
 * every page would be a 403, so say once why, and what would let them in.
 */
function NoAccess(props: { who: WhoAmI; onLogout: () => void }) {
  const { who } = props;
  return (
    <main className="login">
      <h1>Aicerine</h1>
      <section role="alert" aria-label="no access" className="no-access">
        <h2>Your roles do not let you see the cloud</h2>
        <p>
          You are logged in as <strong>{who.user}</strong>
          {who.project ? (
            <>
              {' '}
              in project <strong>{who.project}</strong>
            </>
          ) : null}{' '}
          with the roles <strong>{who.roles.join(', ') || 'none'}</strong>.
        </p>
        <p>
          Aicerine shows every project's servers and every host, so it needs a role that sees the whole cloud:{' '}
          <strong>{who.readRoles.join(', ')}</strong>. A role in one project is not enough. Ask your cloud's
          administrators for one of these roles, then log in again.
        </p>
        <button type="button" onClick={props.onLogout}>
          Log out
        </button>
      </section>
    </main>
  );
}

const NAV: [string, string][] = [
  ['/', 'Overview'],
  ['/plans', 'Plans'],
  ['/executions', 'Executions'],
  ['/quarantine', 'Quarantine'],
  ['/ratios', 'Ratios'],
  ['/shadow-reports', 'Shadow reports'],
  ['/what-if', 'What-if'],
  ['/tasks', 'Tasks'],
  ['/maintenance', 'Maintenance'],
];

function Shell(props: { who: WhoAmI; onLogout: () => void }) {
  const path = useLocation();
  const route = match(path);
  const { who } = props;
  return (
    <>
      <header className="top">
        <strong className="brand">Aicerine</strong>
        <nav>
          {NAV.map(([to, label]) => (
            <Link
              key={to}
              to={to}
              className={
                route?.page === to || (to !== '/' && route?.page.startsWith(`${to}/`)) ? 'current' : ''
              }
            >
              {label}
            </Link>
          ))}
        </nav>
        <span className="spacer" />
        <GlobalPause />
        {who.mode === 'no-auth' ? (
          <span className="badge warn" title="the service runs without authentication (loopback demo)">
            no-auth mode
          </span>
        ) : (
          <>
            <span className="who" title={`roles: ${who.roles.join(', ')}`}>
              {who.user}
              {who.project ? ` @ ${who.project}` : ''}
            </span>
            <button type="button" onClick={props.onLogout}>
              Log out
            </button>
          </>
        )}
      </header>
      <main>
        <Page route={route} />
      </main>
    </>
  );
}

function Page(props: { route: Route | null }) {
  const r = props.route;
  if (r === null)
    return (
      <p>
        No such page. <Link to="/">Overview</Link>
      </p>
    );
  switch (r.page) {
    case '/':
    case '/login':
      return <Overview />;
    case '/aggregates/:name':
      return <Overview only={r.params.name} />;
    case '/plans':
      return <PlanList />;
    case '/plans/:id':
      return <PlanDetail id={r.params.id ?? ''} />;
    case '/executions':
      return <Executions />;
    case '/executions/:id':
      return <Executions id={r.params.id} />;
    case '/quarantine':
      return <Quarantine />;
    case '/ratios':
      return <Ratios />;
    case '/shadow-reports':
      return <ShadowReports />;
    case '/what-if':
      return <WhatIf />;
    case '/tasks':
      return <Tasks />;
    case '/tasks/:id':
      return <TaskDetail id={r.params.id ?? ''} />;
    case '/maintenance':
      return <Maintenance />;
    case '/maintenance/:id':
      return <Maintenance id={r.params.id ?? ''} />;
  }
}

function GlobalPause() {
  const can = useCan();
  const pauses = usePoll('pauses', () => get<Pauses>('/v1/pauses'));
  if (pauses.data === null) return null;
  const g = pauses.data.global;
  const paused = g.configured || g.runtime !== null;
  return (
    <span className="global-pause">
      {paused && (
        <span
          className="badge warn"
          title={g.runtime?.reason ?? (g.configured ? 'paused in the configuration' : '')}
        >
          paused{g.runtime ? ` by ${g.runtime.by.replace(/^operator:/, '')}` : ''}
        </span>
      )}
      {paused
        ? g.runtime !== null && can('resume') && <ActionButton label="Resume all" path="/v1/resume" />
        : can('pause') && <ActionButton label="Pause all" className="danger" path="/v1/pause" />}
    </span>
  );
}
