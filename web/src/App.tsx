import { lazy, Suspense, useEffect, useRef, useState, type ComponentType } from 'react';
import { useMutation } from 'urql';
import { restartSubscriptions } from './client.js';
import { graphql } from './gql/index.js';
import { useI18n, type Language } from './i18n.js';
import { Link, navigate, useLocation } from './router.js';
import { useSession } from './session.js';
import type { StringKey } from './strings.js';
import { applyTheme, initialTheme, type Theme } from './theme.js';
import { Button, Loading, Notice } from './ui.js';
import { ContextSwitch, PersonalNotice } from './context-switch.js';
import { may, useOrganization, type Capability } from './organization.js';
import { nextPath, SignIn, SignUp } from './pages/auth.js';
import { Invite } from './pages/invite.js';
import { OrganizationInvitations } from './pages/org-invitations.js';
import { OrganizationMembers } from './pages/org-members.js';
import { CreateOrganization } from './pages/org-new.js';
import { OrganizationStatements } from './pages/org-statements.js';
import { Dashboard } from './pages/dashboard.js';
import { Keys } from './pages/keys.js';
import { Models } from './pages/models.js';
import { Usage } from './pages/usage.js';
import { Payments } from './pages/payments.js';
import { Videos } from './pages/videos.js';
import { Webhooks } from './pages/webhooks.js';
import { Status } from './pages/status.js';
import { News } from './pages/news.js';
import { Alerts } from './pages/alerts.js';
import { Leaderboard } from './pages/leaderboard.js';
import { Playground } from './pages/playground.js';
import { Profile } from './pages/profile.js';

// Admin pages are a separate chunk: customers never download them.
const admin = (name: 'AdminAccounts' | 'AdminCatalog' | 'AdminAnnouncements' | 'AdminInvoices' | 'AdminProbes' | 'AdminUpstreams' | 'AdminMargin') =>
  lazy(async () => ({ default: (await import('./pages/admin/index.js'))[name] as ComponentType }));

interface Route {
  path: string;
  title: StringKey;
  page: ComponentType;
  /** Shown to visitors who are not signed in. */
  public?: boolean;
  admin?: boolean;
  /** An organization's page (issue 56): listed in an organization context, for the roles with the capability. */
  organization?: Capability | true;
  /** Shows the personal account's data even in an organization context (the page says so). */
  personal?: boolean;
  /** Not listed in the navigation (reached by a link). */
  hidden?: boolean;
}

const routes: Route[] = [
  { path: '/app/dashboard', title: 'nav.dashboard', page: Dashboard },
  { path: '/app/keys', title: 'nav.keys', page: Keys },
  { path: '/app/models', title: 'nav.models', page: Models, public: true },
  { path: '/app/usage', title: 'nav.usage', page: Usage },
  { path: '/app/payments', title: 'nav.payments', page: Payments },
  { path: '/app/videos', title: 'nav.videos', page: Videos, personal: true },
  { path: '/app/webhooks', title: 'nav.webhooks', page: Webhooks, personal: true },
  { path: '/app/playground', title: 'nav.playground', page: Playground },
  { path: '/app/status', title: 'nav.status', page: Status, public: true },
  { path: '/app/news', title: 'nav.news', page: News },
  { path: '/app/alerts', title: 'nav.alerts', page: Alerts, personal: true },
  { path: '/app/leaderboard', title: 'nav.leaderboard', page: Leaderboard, public: true },
  { path: '/app/profile', title: 'nav.profile', page: Profile },
  { path: '/app/org/members', title: 'nav.orgMembers', page: OrganizationMembers, organization: true },
  { path: '/app/org/invitations', title: 'nav.orgInvitations', page: OrganizationInvitations, organization: 'manageMembers' },
  { path: '/app/org/statements', title: 'nav.orgStatements', page: OrganizationStatements, organization: 'billing' },
  { path: '/app/org/new', title: 'nav.orgCreate', page: CreateOrganization, hidden: true },
  { path: '/app/invite', title: 'nav.invite', page: Invite, public: true, hidden: true },
  { path: '/app/admin/accounts', title: 'nav.adminAccounts', page: admin('AdminAccounts'), admin: true },
  { path: '/app/admin/catalog', title: 'nav.adminCatalog', page: admin('AdminCatalog'), admin: true },
  { path: '/app/admin/announcements', title: 'nav.adminAnnouncements', page: admin('AdminAnnouncements'), admin: true },
  { path: '/app/admin/invoices', title: 'nav.adminInvoices', page: admin('AdminInvoices'), admin: true },
  { path: '/app/admin/probes', title: 'nav.adminProbes', page: admin('AdminProbes'), admin: true },
  { path: '/app/admin/upstreams', title: 'nav.adminUpstreams', page: admin('AdminUpstreams'), admin: true },
  { path: '/app/admin/margin', title: 'nav.adminMargin', page: admin('AdminMargin'), admin: true },
];

const LogoutDocument = graphql(`
  mutation Logout {
    logout
  }
`);

export function App() {
  const { t } = useI18n();
  const { account, loading, refresh } = useSession();
  const { path, query } = useLocation();
  const [theme, setTheme] = useState<Theme>(initialTheme);
  const [menuOpen, setMenuOpen] = useState(false);
  const [, logout] = useMutation(LogoutDocument);
  const main = useRef<HTMLElement>(null);

  useEffect(() => applyTheme(theme), [theme]);
  // Focus moves to the new page's heading, so keyboard and screen-reader users start there.
  useEffect(() => {
    setMenuOpen(false);
    main.current?.querySelector<HTMLElement>('h1')?.focus({ preventScroll: true });
  }, [path]);

  const signedOutPaths = ['/app/sign-in', '/app/sign-up'];
  useEffect(() => {
    if (loading) return;
    if (!account && !signedOutPaths.includes(path) && !routes.some((r) => r.public && r.path === path)) navigate('/app/sign-in', { replace: true });
    if (account && (signedOutPaths.includes(path) || path === '/' || path === '/app' || path === '/app/')) navigate((signedOutPaths.includes(path) && nextPath(query)) || '/app/dashboard', { replace: true });
  }, [account, loading, path]);

  const signOut = async () => {
    await logout({});
    restartSubscriptions();
    await refresh();
    navigate('/app/sign-in');
  };

  const route = routes.find((r) => r.path === path);
  let content;
  if (loading) content = <Loading />;
  else if (path === '/app/sign-in') content = <SignIn />;
  else if (path === '/app/sign-up') content = <SignUp />;
  else if (!route) content = <NotFound />;
  else if (route.admin && !account?.isAdmin) content = <Notice kind="warning">{t('common.adminOnly')}</Notice>;
  else if (!account && !route.public) content = <Loading />;
  else
    content = (
      <>
        {route.personal && <PersonalNotice />}
        <route.page />
      </>
    );

  const visible = routes.filter((r) => !r.hidden && (account ? !r.admin || account.isAdmin : r.public));
  const customerLinks = visible.filter((r) => !r.admin && !r.organization);
  const adminLinks = visible.filter((r) => r.admin);

  return (
    <>
      <a className="skip-link" href="#main">
        {t('common.skipToContent')}
      </a>
      <TopBar theme={theme} setTheme={setTheme} menuOpen={menuOpen} setMenuOpen={setMenuOpen} signOut={signOut} />
      <div className="layout">
        <SiteNav open={menuOpen} customerLinks={customerLinks} adminLinks={adminLinks} />
        <main id="main" ref={main}>
          {account && !account.emailVerified && account.email && path !== '/app/profile' && (
            <Notice kind="warning">
              {t('auth.verifyBanner')} <Link to="/app/profile">{t('auth.verifyNow')}</Link>
            </Notice>
          )}
          <Suspense fallback={<Loading />}>{content}</Suspense>
        </main>
      </div>
    </>
  );
}

interface TopBarProps {
  theme: Theme;
  setTheme: (theme: Theme) => void;
  menuOpen: boolean;
  setMenuOpen: (open: boolean) => void;
  signOut: () => Promise<void>;
}

/** The brand, who is signed in, language, theme, sign-out and (on a phone) the menu button. */
function TopBar({ theme, setTheme, menuOpen, setMenuOpen, signOut }: TopBarProps) {
  const { t, language, setLanguage } = useI18n();
  const { account } = useSession();
  return (
    <header className="topbar">
      <Link to={account ? '/app/dashboard' : '/app/sign-in'} className="brand">
        <svg aria-hidden="true" viewBox="0 0 32 32" width="24" height="24">
          <rect width="32" height="32" rx="7" fill="currentColor" />
          <path d="M5 21c4-6 7-6 11 0s7 6 11 0" stroke="var(--bg)" strokeWidth="3" fill="none" strokeLinecap="round" />
        </svg>
        Baikal
      </Link>
      <div className="topbar-tools">
        {account && (
          <span className="who" aria-label={t('common.balance')}>
            {account.username ?? account.email}
          </span>
        )}
        {account && <ContextSwitch />}
        <label className="visually-hidden" htmlFor="language">
          {t('common.language')}
        </label>
        <select id="language" value={language} onChange={(e) => setLanguage(e.target.value as Language)}>
          <option value="en">English</option>
          <option value="ru">Русский</option>
        </select>
        <Button kind="secondary" onClick={() => { const next = theme === 'dark' ? 'light' : 'dark'; applyTheme(next, true); setTheme(next); }} aria-label={t(theme === 'dark' ? 'common.lightTheme' : 'common.darkTheme')}>
          {theme === 'dark' ? '☀' : '☾'}
        </Button>
        {account ? (
          <Button kind="secondary" onClick={signOut}>
            {t('auth.signOut')}
          </Button>
        ) : null}
        <Button kind="secondary" className="menu-toggle" aria-expanded={menuOpen} aria-controls="site-nav" onClick={() => setMenuOpen(!menuOpen)}>
          {t('common.menu')}
        </Button>
      </div>
    </header>
  );
}

/** The pages the visitor may open: the customer's, sign-in and sign-up when signed out, the admin's under their own heading. */
function SiteNav({ open, customerLinks, adminLinks }: { open: boolean; customerLinks: Route[]; adminLinks: Route[] }) {
  const { t } = useI18n();
  const { account } = useSession();
  return (
    <nav id="site-nav" className={`sidebar ${open ? 'open' : ''}`} aria-label={t('common.navigation')}>
      <ul>
        {customerLinks.map((r) => (
          <li key={r.path}>
            <Link to={r.path}>{t(r.title)}</Link>
          </li>
        ))}
        {!account && (
          <>
            <li>
              <Link to="/app/sign-in">{t('auth.signIn')}</Link>
            </li>
            <li>
              <Link to="/app/sign-up">{t('auth.signUp')}</Link>
            </li>
          </>
        )}
      </ul>
      <OrganizationLinks routes={routes} />
      {adminLinks.length > 0 && (
        <>
          <p className="nav-group">{t('nav.adminGroup')}</p>
          <ul>
            {adminLinks.map((r) => (
              <li key={r.path}>
                <Link to={r.path}>{t(r.title)}</Link>
              </li>
            ))}
          </ul>
        </>
      )}
    </nav>
  );
}

function NotFound() {
  const { t } = useI18n();
  return (
    <section className="page">
      <h1 tabIndex={-1}>{t('common.notFound')}</h1>
      <Link to="/app/dashboard">{t('nav.dashboard')}</Link>
    </section>
  );
}

/**
 * The organization's pages (in an organization context, those the role may use) under the organization's name, and
 * the link to found one; nothing for visitors who are not signed in.
 */
function OrganizationLinks({ routes: all }: { routes: Route[] }) {
  const { t } = useI18n();
  const { account } = useSession();
  const { current } = useOrganization();
  if (!account) return null;
  const pages = current ? all.filter((r) => r.organization && (r.organization === true || may(current.role, r.organization))) : [];
  return (
    <>
      <p className="nav-group">{current ? current.name : t('nav.orgGroup')}</p>
      <ul>
        {pages.map((r) => (
          <li key={r.path}>
            <Link to={r.path}>{t(r.title)}</Link>
          </li>
        ))}
        <li>
          <Link to="/app/org/new">{t('nav.orgCreate')}</Link>
        </li>
      </ul>
    </>
  );
}
