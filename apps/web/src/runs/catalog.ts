import { useQuery } from '@tanstack/react-query';
import { Routes } from '../api/routes';
import { call } from '../api/client';

/** The caller's tool catalog (effects for badges; schemas for checking plans in the browser). */
export function useCatalog() {
  return useQuery({ queryKey: ['catalog'], queryFn: () => call(Routes.toolCatalog), staleTime: 60_000 });
}
