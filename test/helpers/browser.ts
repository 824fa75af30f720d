import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT } from './process.js';

/** Debian's Chromium (`.ci/run` installs it; never a downloaded browser), or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where the browser tests write their screenshots of every page (the README names it). */
export const SCREENSHOTS = path.join(ROOT, 'test-results/cabinet-screenshots');

/** Fails at once, saying what to install, when Chromium is missing (before anything is started for nothing). */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** Every string React holds for the page (props and hook state of every component) and every input's value that contains one of `needles`. */
export function reactStateHolds(page: Page, needles: string[]): Promise<string[]> {
  return page.evaluate((secrets) => {
    const root = document.getElementById('root') as unknown as Record<string, unknown>;
    const containerKey = Object.keys(root).find((key) => key.startsWith('__reactContainer$'));
    const found: string[] = [];
    const seen = new Set<unknown>();
    const search = (value: unknown, depth: number) => {
      if (depth > 8 || value === null || value === undefined) return;
      if (typeof value === 'string') {
        for (const needle of secrets) if (value.includes(needle)) found.push(needle);
        return;
      }
      if (typeof value !== 'object' || seen.has(value)) return;
      seen.add(value);
      if ((value as { nodeType?: number }).nodeType !== undefined) return; // DOM nodes are searched as HTML
      for (const key of Object.keys(value as object)) {
        if (key === '_owner' || key === 'return' || key === 'stateNode' || key === '_debugOwner') continue;
        search((value as Record<string, unknown>)[key], depth + 1);
      }
    };
    type Fiber = { child: Fiber | null; sibling: Fiber | null; memoizedState: unknown; memoizedProps: unknown };
    const walk = (fiber: Fiber | null) => {
      for (let node = fiber; node; node = node.sibling) {
        search(node.memoizedProps, 0);
        search(node.memoizedState, 0);
        walk(node.child);
      }
    };
    walk((root[containerKey!] as { child: Fiber | null }).child ?? null);
    const inputs = [...document.querySelectorAll('input')].map((input) => (input as unknown as { value: string }).value);
    for (const value of inputs) for (const needle of secrets) if (value.includes(needle)) found.push(`input:${needle}`);
    return [...new Set(found)];
  }, needles);
}

/** The cabinet's rendering of a decimal USD amount (ui.tsx formatUsd). */
export function usd(value: string): string {
  const negative = value.startsWith('-');
  const [whole, fraction = ''] = value.replace(/^-/, '').split('.');
  return `${negative ? '-' : ''}$${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${fraction.replace(/0+$/, '').padEnd(2, '0')}`;
}

/** The page's globals, inside `page.evaluate` (the test project has no DOM types). */
declare const document: { getElementById(id: string): unknown; querySelectorAll(selector: string): Iterable<unknown> };

/** Signs in through the cabinet's form (English labels) and waits for the dashboard. */
export async function signIn(page: Page, baseUrl: string, login: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/app/sign-in`);
  await page.getByLabel('Username or e-mail').fill(login);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/app\/dashboard$/);
}
