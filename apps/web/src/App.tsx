import { lazy, Suspense } from 'react';
import { Navigate, Route, Routes } from 'react-router';
import { useAuth } from './api/auth';
import { Layout } from './ui/Layout';
import { RunPage } from './runs/prefetch';
import { Loading } from './ui/bits';
import { NotFoundPage } from './pages/NotFoundPage';
import { SignInPage } from './pages/SignInPage';
import { RunsPage } from './pages/RunsPage';

// The heavier pages load on demand: the first load stays small.
const InboxPage = lazy(() => import('./pages/InboxPage'));
const TasksPage = lazy(() => import('./pages/TasksPage'));
const TriggersPage = lazy(() => import('./pages/TriggersPage'));
const ToolsPage = lazy(() => import('./pages/ToolsPage'));
const SettingsPage = lazy(() => import('./pages/SettingsPage'));
const PluginsPage = lazy(() => import('./pages/PluginsPage'));
const FlowsPage = lazy(() => import('./pages/FlowsPage'));
const FlowEditorPage = lazy(() => import('./flows/FlowEditorPage'));
const ChatPage = lazy(() => import('./pages/ChatPage'));

export function App() {
  const { token, me } = useAuth();
  if (!token) return <SignInPage />;
  if (!me) return <Loading />;
  return (
    <Layout>
      <Suspense fallback={<Loading />}>
        <Routes>
          <Route path="/" element={<Navigate to="/runs" replace />} />
          <Route path="/runs" element={<RunsPage />} />
          <Route path="/runs/:runId" element={<RunPage />} />
          {/* One route for both, so creating a chat keeps the page (and its first message). */}
          <Route path="/chat/:sessionId?" element={<ChatPage />} />
          <Route path="/flows" element={<FlowsPage />} />
          <Route path="/inbox" element={<InboxPage />} />
          <Route path="/tasks" element={<TasksPage />} />
          <Route path="/triggers/*" element={<TriggersPage />} />
          <Route path="/tools/*" element={<ToolsPage />} />
          <Route path="/plugins/*" element={<PluginsPage />} />
          <Route path="/settings/*" element={<SettingsPage />} />
          <Route path="/flows/:flowId" element={<FlowEditorPage />} />
          <Route path="*" element={<NotFoundPage />} />
        </Routes>
      </Suspense>
    </Layout>
  );
}
