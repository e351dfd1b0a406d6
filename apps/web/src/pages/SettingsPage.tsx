import type { ReactNode } from 'react';
import { Navigate, Route, Routes } from 'react-router';
import type { Permission } from '@switchyard/contracts';
import { useAuth } from '../api/auth';
import { useI18n } from '../i18n/i18n';
import type { MessageKey } from '../i18n/en';
import { PageHeader } from '../ui/bits';
import { SubNav } from '../ui/SubNav';
import { Agents } from '../settings/Agents';
import { Hooks } from '../settings/Hooks';
import { McpAccess } from '../settings/McpAccess';
import { Memory } from '../settings/Memory';
import { RulesEditor } from '../settings/RulesEditor';
import { Tokens } from '../settings/Tokens';
import { NotFoundPage } from './NotFoundPage';

const SECTIONS: readonly { path: string; label: MessageKey; needs: Permission; element: ReactNode }[] = [
  { path: 'rules', label: 'settings.rules', needs: 'settings:permissions:read', element: <RulesEditor /> },
  { path: 'hooks', label: 'settings.hooks', needs: 'settings:hooks:read', element: <Hooks /> },
  { path: 'agents', label: 'settings.agents', needs: 'agent:agent:list', element: <Agents /> },
  { path: 'tokens', label: 'settings.tokens', needs: 'identity:token:list', element: <Tokens /> },
  { path: 'memory', label: 'settings.memory', needs: 'settings:memory:read', element: <Memory /> },
  { path: 'mcp', label: 'settings.mcp', needs: 'settings:mcp:read', element: <McpAccess /> },
];

/** Settings: permission rules, hooks, agents, tokens, memory and MCP access, each at /settings/<section>. */
export default function SettingsPage() {
  const { t } = useI18n();
  const { can } = useAuth();
  const shown = SECTIONS.filter((s) => can(s.needs));
  return (
    <section>
      <PageHeader title={t('settings.title')} />
      <SubNav
        label={t('settings.title')}
        items={shown.map((s) => ({ to: `/settings/${s.path}`, label: t(s.label) }))}
      />
      <Routes>
        <Route index element={shown[0] ? <Navigate to={shown[0].path} replace /> : <NotFoundPage />} />
        {shown.map((s) => (
          <Route key={s.path} path={s.path} element={s.element} />
        ))}
        <Route path="*" element={<NotFoundPage />} />
      </Routes>
    </section>
  );
}
