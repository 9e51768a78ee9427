// The dashboard's pages, as route patterns: the service answers each with the dashboard's
// index.html, and the dashboard's router matches the same list. Kept apart from everything else
// (no imports) because the browser bundle imports it too.

export const WEB_PAGES = [
  '/',
  '/aggregates/:name',
  '/plans',
  '/plans/:id',
  '/executions',
  '/executions/:id',
  '/quarantine',
  '/ratios',
  '/shadow-reports',
  '/what-if',
  '/tasks',
  '/tasks/:id',
  '/maintenance',
  '/maintenance/:id',
  '/login',
] as const;

export type WebPage = (typeof WEB_PAGES)[number];
