import { useRef, useState, type FormEvent } from 'react';
import { useQuery } from 'urql';
import { useI18n } from '../i18n.js';
import { KeyPicker } from '../key-picker.js';
import { useSession } from '../session.js';
import { Button, Card, Page, SelectField, TextAreaField } from '../ui.js';
import { ModelsDocument } from './models.js';

/** Reads an OpenAI chat stream: each `data:` line's delta text, until `[DONE]`. */
export async function readChatStream(body: ReadableStream<Uint8Array>, onText: (text: string) => void): Promise<{ usage: { prompt_tokens?: number; completion_tokens?: number } | null }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let usage = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') return { usage };
      const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string } }[]; usage?: typeof usage; error?: { message: string } };
      if (chunk.error) throw new Error(chunk.error.message);
      const text = chunk.choices?.[0]?.delta?.content;
      if (text) onText(text);
      if (chunk.usage) usage = chunk.usage;
    }
  }
  return { usage };
}

export function Playground() {
  const { t, count } = useI18n();
  const { keyring } = useSession();
  const [models] = useQuery({ query: ModelsDocument });
  const chatModels = (models.data?.catalogModels ?? []).filter((m) => m.endpoints.includes('/v1/chat/completions'));
  const [secret, setSecret] = useState(keyring[0]?.secret ?? '');
  const [model, setModel] = useState('');
  const [prompt, setPrompt] = useState('');
  const [answer, setAnswer] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const running = useRef<AbortController | null>(null);
  const chosen = model || chatModels[0]?.id || '';

  const send = async (event: FormEvent) => {
    event.preventDefault();
    if (!secret || !prompt.trim()) return setFailure(t(!secret ? 'video.needKey' : 'video.needPrompt'));
    setAnswer('');
    setFailure(null);
    setStatus(t('play.streaming'));
    const controller = new AbortController();
    running.current = controller;
    try {
      const response = await fetch('/v1/chat/completions', {
        method: 'POST',
        credentials: 'omit',
        signal: controller.signal,
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: chosen, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: prompt }] }),
      });
      if (!response.ok || !response.body) {
        const body = (await response.json().catch(() => null)) as { error?: { message?: string } } | null;
        throw new Error(body?.error?.message ?? `HTTP ${response.status}`);
      }
      const { usage } = await readChatStream(response.body, (text) => setAnswer((previous) => previous + text));
      setStatus(usage ? t('play.done', { input: count('inputToken', usage.prompt_tokens ?? 0), output: count('outputToken', usage.completion_tokens ?? 0) }) : t('play.doneNoUsage'));
    } catch (error) {
      setStatus(null);
      if (!controller.signal.aborted) setFailure((error as Error).message);
      else setStatus(t('play.stopped'));
    } finally {
      running.current = null;
    }
  };

  return (
    <Page title={t('nav.playground')}>
      <div className="grid two">
        <Card>
          <form onSubmit={send} noValidate>
            <KeyPicker value={secret} onChange={setSecret} />
            <SelectField label={t('models.model')} value={chosen} onChange={(e) => setModel(e.target.value)} options={chatModels.map((m) => ({ value: m.id, label: m.label }))} />
            <TextAreaField label={t('play.prompt')} rows={6} value={prompt} onChange={(e) => setPrompt(e.target.value)} />
            <div className="row">
              <Button type="submit" busy={running.current !== null}>
                {t('play.send')}
              </Button>
              <Button kind="secondary" disabled={!running.current} onClick={() => running.current?.abort()}>
                {t('play.stop')}
              </Button>
            </div>
          </form>
        </Card>
        <Card title={t('play.answer')}>
          {failure && (
            <p className="alert error" role="alert">
              {failure}
            </p>
          )}
          <div className="answer prose" aria-live="polite" data-testid="answer">
            {answer}
          </div>
          {status && <p className="hint" role="status">{status}</p>}
        </Card>
      </div>
    </Page>
  );
}
