import { useState } from 'react';
import { useI18n } from './i18n.js';
import { useSession } from './session.js';
import { Field, SelectField } from './ui.js';

/**
 * Which API key the page calls /v1 with: one created in this tab, or one pasted here. Raw keys stay
 * in this tab's memory (never in storage, never sent to the cabinet's API); a reload forgets them.
 */
export function KeyPicker({ value, onChange }: { value: string; onChange(secret: string): void }) {
  const { t } = useI18n();
  const { keyring, remember } = useSession();
  const [pasted, setPasted] = useState('');
  return (
    <div className="key-picker">
      {keyring.length > 0 && (
        <SelectField
          label={t('play.key')}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          options={[{ value: '', label: t('play.chooseKey') }, ...keyring.map((k) => ({ value: k.secret, label: `${k.label} (${k.providerFamily ?? '?'})` }))]}
        />
      )}
      <Field
        label={t('play.pasteKey')}
        type="password"
        autoComplete="off"
        value={pasted}
        hint={t('play.keyMemoryOnly')}
        onChange={(e) => {
          setPasted(e.target.value);
          const secret = e.target.value.trim();
          if (secret.length >= 20) {
            remember({ label: t('play.pastedKey'), secret, providerFamily: null });
            onChange(secret);
          }
        }}
      />
    </div>
  );
}
