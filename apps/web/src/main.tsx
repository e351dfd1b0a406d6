// First, before any other module of the bundle evaluates: the page's first reads (api/early.ts).
import './boot';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { z } from 'zod';
import { App } from './App';
import { AuthProvider, meQuery } from './api/auth';
import { tokenStore } from './api/early';
import { I18nProvider } from './i18n/i18n';
import { applyTheme, initialTheme, ThemeProvider } from './ui/theme';
import { prefetchRunPage } from './runs/prefetch';
import './styles.css';

// The page's Content-Security-Policy forbids eval: zod must not even try its compiled fast path.
z.config({ jitless: true });
applyTheme(initialTheme());

const queries = new QueryClient({
  defaultOptions: {
    queries: { staleTime: 5_000, refetchOnWindowFocus: true, retry: 1 },
  },
});

// Who is signed in, into the cache before the first render (the answer is usually here already,
// see boot.ts): the app then draws its page at once instead of a "loading" frame first.
const token = tokenStore.get();
if (token) void queries.prefetchQuery({ ...meQuery(token), retry: false });
// A deep link to a run: fetch its code, its drawing code and its history now, side by side with
// the sign-in check, instead of one after another.
prefetchRunPage(queries, location.pathname);

// A data router (one catch-all route; the app's own <Routes> inside it): only a data router can
// block a navigation, which the flow builder's unsaved-changes guard needs (`useBlocker`).
const router = createBrowserRouter([
  {
    path: '*',
    element: (
      <AuthProvider>
        <App />
      </AuthProvider>
    ),
  },
]);

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <QueryClientProvider client={queries}>
      <I18nProvider>
        <ThemeProvider>
          <RouterProvider router={router} />
        </ThemeProvider>
      </I18nProvider>
    </QueryClientProvider>
  </StrictMode>,
);
