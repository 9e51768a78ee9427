// Buttons that change something in the service: each posts once, shows what went wrong if it
// did, and refreshes every panel when it worked.
import { useState } from 'react';
import { post } from './api.js';
import { refreshAll } from './poll.js';

export function ActionButton(props: {
  label: string;
  path: string;
  body?: () => unknown;
  className?: string;
  onDone?: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      await post(props.path, props.body?.() ?? {});
      props.onDone?.();
      refreshAll();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="action">
      <button type="button" className={props.className} disabled={busy} onClick={() => void run()}>
        {props.label}
      </button>
      {error && (
        <span role="alert" className="error">
          {error}
        </span>
      )}
    </span>
  );
}

/** The request body, with the comment when one was written. */
export function withComment(comment: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return comment.trim() === '' ? extra : { ...extra, comment: comment.trim() };
}
