import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Provider } from 'urql';
import { App } from './App.js';
import { client } from './client.js';
import { I18nProvider } from './i18n.js';
import { OrganizationProvider } from './organization.js';
import { SessionProvider } from './session.js';
import { en } from './strings.js';
import { applyTheme, initialTheme } from './theme.js';
import { registerKnownKeys } from './ui.js';
import './styles.css';

applyTheme(initialTheme());
registerKnownKeys(Object.keys(en));

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Provider value={client}>
      <I18nProvider>
        <SessionProvider>
          <OrganizationProvider>
            <App />
          </OrganizationProvider>
        </SessionProvider>
      </I18nProvider>
    </Provider>
  </StrictMode>,
);
