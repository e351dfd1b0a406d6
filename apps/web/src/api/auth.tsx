import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { Me, Permission } from '@switchyard/contracts';
import { Routes } from './routes';
import { ApiError, call, onUnauthenticated, tokenStore } from './client';
import { forgetClip } from '../flows/clipboard';

interface Auth {
  readonly token: string | null;
  readonly me: Me | undefined;
  /** Why the last session ended ('rejected': the token was refused at sign-in or later). */
  readonly ended: 'rejected' | null;
  signIn(token: string): Promise<void>;
  signOut(reason?: 'rejected'): void;
  can(permission: Permission): boolean;
}

const Ctx = createContext<Auth | null>(null);

/** Who the token signs in as: the query every page waits for before it draws. */
export function meQuery(token: string | null) {
  return { queryKey: ['me', token], queryFn: () => call(Routes.me), staleTime: 60_000 } as const;
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const queries = useQueryClient();
  const [token, setToken] = useState<string | null>(() => tokenStore.get());
  const [ended, setEnded] = useState<'rejected' | null>(null);
  const me = useQuery({
    ...meQuery(token),
    enabled: token !== null,
    retry: (n, err) => !(err instanceof ApiError && err.status === 401) && n < 2,
  });

  const signOut = useCallback(
    (reason?: 'rejected') => {
      tokenStore.clear();
      forgetClip();
      setToken(null);
      setEnded(reason ?? null);
      queries.clear();
    },
    [queries],
  );
  useEffect(() => onUnauthenticated(() => signOut('rejected')), [signOut]);

  const signIn = useCallback(
    async (candidate: string) => {
      tokenStore.set(candidate);
      try {
        const who = await call(Routes.me);
        queries.setQueryData(['me', candidate], who);
        setEnded(null);
        setToken(candidate);
      } catch (err) {
        tokenStore.clear();
        throw err;
      }
    },
    [queries],
  );

  const value = useMemo<Auth>(
    () => ({
      token,
      me: me.data,
      ended,
      signIn,
      signOut,
      can: (p) => me.data?.permissions.includes(p) ?? false,
    }),
    [token, me.data, ended, signIn, signOut],
  );
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

export function useAuth(): Auth {
  const auth = useContext(Ctx);
  if (!auth) throw new Error('useAuth outside AuthProvider');
  return auth;
}
