// Who is using the dashboard: the service's answer to GET /v1/whoami (roles and the actions they
// allow, or the no-auth mode), and the Keystone login that gets a token for it.
import { createContext, type FormEvent, useContext, useState } from 'react';
import { ApiFailure, post, storeToken } from './api.js';
import type { LoginBody, LoginResult, WhoAmI } from './types.js';

export const SessionContext = createContext<WhoAmI | null>(null);

/** Whether the caller may take an action (plan.approve, execution.abort, pause...). */
export function useCan(): (action: string) => boolean {
  const who = useContext(SessionContext);
  return (action) => who?.actions.includes(action) ?? false;
}

export function LoginForm(props: { onLogin: (who: WhoAmI) => void; notice: string | null }) {
  const [form, setForm] = useState<Required<LoginBody>>({
    username: '',
    password: '',
    project: '',
    userDomain: 'Default',
    projectDomain: 'Default',
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const field = (key: keyof LoginBody, label: string, type = 'text') => (
    <label>
      {label}
      <input
        name={key}
        type={type}
        value={form[key]}
        required
        autoComplete={key === 'password' ? 'current-password' : key === 'username' ? 'username' : 'off'}
        onChange={(e) => setForm({ ...form, [key]: e.target.value })}
      />
    </label>
  );
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const res = await post<LoginResult>('/v1/auth/tokens', form);
      storeToken(res.token);
      const { token: _token, ...who } = res;
      props.onLogin(who);
    } catch (err) {
      setError(
        err instanceof ApiFailure && err.status === 401
          ? 'Keystone refused these credentials'
          : err instanceof Error
            ? err.message
            : String(err),
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="login">
      <h1>Aicerine</h1>
      <form onSubmit={submit} aria-label="log in">
        <p>Log in with your OpenStack (Keystone) account.</p>
        {props.notice && <p className="notice">{props.notice}</p>}
        {field('username', 'User name')}
        {field('password', 'Password', 'password')}
        {field('project', 'Project')}
        {field('userDomain', 'User domain')}
        {field('projectDomain', 'Project domain')}
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Log in
        </button>
      </form>
    </main>
  );
}
