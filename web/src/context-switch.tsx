import { useI18n } from './i18n.js';
import { useOrganization } from './organization.js';
import { navigate, useLocation } from './router.js';
import { Notice } from './ui.js';

/**
 * The header's switch between the personal account and the signed-in user's organizations (remembered per browser).
 * Leaving an organization's own page for the personal account goes to the dashboard, which has both views.
 */
export function ContextSwitch() {
  const { t } = useI18n();
  const { organizations, current, select } = useOrganization();
  const { path } = useLocation();
  if (!organizations.length) return null;
  return (
    <>
      <label className="visually-hidden" htmlFor="context">
        {t('org.context')}
      </label>
      <select
        id="context"
        value={current?.id ?? ''}
        onChange={(e) => {
          select(e.target.value || null);
          if (!e.target.value && path.startsWith('/app/org/') && path !== '/app/org/new') navigate('/app/dashboard');
        }}
      >
        <option value="">{t('org.personal')}</option>
        {organizations.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
      </select>
    </>
  );
}

/** Over a page that shows the personal account's data while an organization is chosen in the header. */
export function PersonalNotice() {
  const { t } = useI18n();
  const { current } = useOrganization();
  return current ? <Notice>{t('org.personalPage', { name: current.name })}</Notice> : null;
}
