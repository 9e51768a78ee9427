// Pages by path (the list the service answers with index.html, src/api/web-pages.ts), moved
// between with the History API so the dashboard never reloads.
import { type MouseEvent, type ReactNode, useEffect, useState } from 'react';
import { WEB_PAGES, type WebPage } from '../../src/api/web-pages.js';

export interface Route {
  page: WebPage;
  params: Record<string, string>;
}

export function match(path: string): Route | null {
  const parts = path.split('/').filter((p) => p !== '');
  for (const page of WEB_PAGES) {
    const pattern = page.split('/').filter((p) => p !== '');
    if (pattern.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    pattern.forEach((seg, i) => {
      const part = parts[i]!;
      if (seg.startsWith(':')) params[seg.slice(1)] = decodeURIComponent(part);
      else if (seg !== part) ok = false;
    });
    if (ok) return { page, params };
  }
  return null;
}

const subscribers = new Set<() => void>();

export function navigate(path: string): void {
  if (path === window.location.pathname + window.location.search) return;
  window.history.pushState(null, '', path);
  for (const f of subscribers) f();
}

export function useLocation(): string {
  const [path, setPath] = useState(window.location.pathname);
  useEffect(() => {
    const update = () => setPath(window.location.pathname);
    subscribers.add(update);
    window.addEventListener('popstate', update);
    return () => {
      subscribers.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

export function Link(props: { to: string; children: ReactNode; className?: string }) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.to);
  };
  return (
    <a href={props.to} onClick={onClick} className={props.className}>
      {props.children}
    </a>
  );
}
