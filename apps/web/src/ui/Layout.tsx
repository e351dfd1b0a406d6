import { useEffect, useRef, type ReactNode } from 'react';
import { NavLink, useLocation } from 'react-router';
import type { Permission } from '@switchyard/contracts';
import { useAuth } from '../api/auth';
import { useInboxCount } from '../api/inbox';
import { useOwnerFeed } from '../live/feed';
import { useI18n } from '../i18n/i18n';
import type { MessageKey } from '../i18n/en';
import { useTheme } from './theme';

interface NavItem {
  readonly to: string;
  readonly label: MessageKey;
  /** Shown only to callers holding this permission. */
  readonly needs?: Permission;
}

const NAV: readonly NavItem[] = [
  { to: '/runs', label: 'nav.runs', needs: 'agent:run:list' },
  { to: '/chat', label: 'nav.chat', needs: 'agent:chat:use' },
  { to: '/flows', label: 'nav.flows', needs: 'workflow:list' },
  { to: '/inbox', label: 'nav.inbox', needs: 'agent:run:approve' },
  { to: '/tasks', label: 'nav.tasks', needs: 'agent:task:list' },
  { to: '/triggers', label: 'nav.triggers', needs: 'agent:task:list' },
  { to: '/tools', label: 'nav.tools', needs: 'mcp:tool:list' },
  { to: '/plugins', label: 'nav.plugins', needs: 'plugin:plugin:manage' },
  { to: '/settings', label: 'nav.settings' },
];

export function Layout({ children }: { children: ReactNode }) {
  const { t, lang, setLang } = useI18n();
  const { me, can, signOut } = useAuth();
  const { theme, toggle: toggleTheme } = useTheme();
  const feed = useOwnerFeed();
  const inbox = useInboxCount();
  const nav = useRef<HTMLElement>(null);
  const { pathname } = useLocation();
  // On a narrow window the links are one row that scrolls sideways: keep the current one in view.
  useEffect(() => {
    nav.current?.querySelector('a.active')?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [pathname]);
  return (
    <div className="shell">
      <a className="skip" href="#main">
        {t('nav.skip')}
      </a>
      <header className="topbar">
        <NavLink to="/runs" className="brand" aria-label={t('app.name')}>
          <img src="/favicon.svg" alt="" width={22} height={22} />
          <span>{t('app.name')}</span>
        </NavLink>
        <nav aria-label="main" className="mainnav" ref={nav}>
          {NAV.filter((item) => !item.needs || can(item.needs)).map((item) => (
            <NavLink key={item.to} to={item.to} className={({ isActive }) => (isActive ? 'active' : '')}>
              {t(item.label)}
              {item.to === '/inbox' && inbox > 0 ? (
                <span className="count" aria-label={`${inbox}`} data-testid="inbox-count">
                  {inbox}
                </span>
              ) : null}
            </NavLink>
          ))}
        </nav>
        <div className="topbar-tools">
          <span
            className={`live-dot ${feed}`}
            title={feed === 'open' ? t('common.live') : t('common.reconnecting')}
          />
          <span className="who" title={me?.owner.role}>
            {me?.owner.name}
            <small>{me?.owner.role}</small>
          </span>
          <button type="button" onClick={toggleTheme} aria-label={t('nav.theme')} title={t('nav.theme')}>
            {theme === 'dark' ? '☀' : '☾'}
          </button>
          <button type="button" onClick={() => setLang(lang === 'en' ? 'zh' : 'en')}>
            {t('nav.language')}
          </button>
          <button type="button" onClick={() => signOut()}>
            {t('nav.signOut')}
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
