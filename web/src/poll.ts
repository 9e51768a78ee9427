// Live data without reloads: fetch now, then again a few seconds after each answer (never two
// requests of one panel in flight), and at once when an action asks for a refresh.
import { useCallback, useEffect, useRef, useState } from 'react';

export const POLL_MS = 2000;

export interface Polled<T> {
  data: T | null;
  error: string | null;
  refresh: () => void;
}

const listeners = new Set<() => void>();

/** After an action (approve, abort, pause...): every panel fetches again now. */
export function refreshAll(): void {
  for (const f of listeners) f();
}

export function usePoll<T>(key: string, fetcher: () => Promise<T>, intervalMs = POLL_MS): Polled<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const fetcherRef = useRef(fetcher);
  fetcherRef.current = fetcher;
  const wake = useRef<() => void>(() => {});

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new key is another source: start over
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let inFlight = false;
    let again = false;
    setData(null);
    setError(null);
    const tick = async () => {
      if (stopped) return;
      if (inFlight) {
        again = true;
        return;
      }
      clearTimeout(timer);
      inFlight = true;
      try {
        const d = await fetcherRef.current();
        if (!stopped) {
          setData(d);
          setError(null);
        }
      } catch (e) {
        if (!stopped) setError(e instanceof Error ? e.message : String(e));
      } finally {
        inFlight = false;
      }
      if (stopped) return;
      if (again) {
        again = false;
        void tick();
      } else timer = setTimeout(() => void tick(), intervalMs);
    };
    wake.current = () => void tick();
    listeners.add(wake.current);
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
      listeners.delete(wake.current);
    };
  }, [key, intervalMs]);

  const refresh = useCallback(() => wake.current(), []);
  return { data, error, refresh };
}
