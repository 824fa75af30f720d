import { useState } from 'react';

/**
 * The Usage page's CSV export (web/src/pages/usage.tsx): the account's built in the browser from its usage pages,
 * an organization's downloaded from the server's `/orgs/{organization_id}/usage.csv`.
 */

/** The most rows one CSV export fetches (200 per request). */
const EXPORT_MAX_ROWS = 20_000;

/** The Usage page's filters, as its form holds them. */
export interface Filters {
  from: string;
  to: string;
  model: string;
  group: string;
  status: string;
  providerFamily: string;
  /** An organization's member (organization context only). */
  memberId: string;
}

/** A usage row as the export reads it: its columns by name (createdAt is the next page's cursor). */
export type Row = { createdAt: string };

/** One millisecond before an event: the next (older) page's `to`. */
export function justBefore(iso: string): string {
  return new Date(new Date(iso).getTime() - 1).toISOString();
}

// The account's export (an organization's comes from the server); `memberName` is always empty here, kept as it was.
const CSV_COLUMNS = ['createdAt', 'requestId', 'memberName', 'model', 'providerFamily', 'routeGroup', 'status', 'endpoint', 'promptTokens', 'completionTokens', 'totalTokens', 'cacheReadTokens', 'cacheWriteTokens', 'amountUsd', 'officialCostUsd', 'savedUsd', 'latencyMs', 'errorCode'] as const;

function csvCell(value: unknown): string {
  const text = value == null ? '' : String(value);
  // A leading =, +, - or @ would run as a formula in a spreadsheet.
  const safe = /^[=+\-@]/.test(text) && !/^-?\d/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** Saves `blob` as a file the browser downloads. */
function save(blob: Blob, name: string): void {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = name;
  link.click();
  URL.revokeObjectURL(link.href);
}

/** The server's CSV of an organization's usage: `/orgs/{id}/usage.csv` with the filters in its query names (session cookie). */
function organizationCsvUrl(organizationId: string, filters: Filters): string {
  const query = new URLSearchParams();
  if (filters.from) query.set('from', new Date(filters.from).toISOString());
  if (filters.to) query.set('to', new Date(filters.to).toISOString());
  for (const [name, value] of [['model', filters.model], ['group', filters.group], ['status', filters.status], ['provider_family', filters.providerFamily], ['member_id', filters.memberId]]) {
    if (value) query.set(name!, value);
  }
  const search = query.toString();
  return `/orgs/${encodeURIComponent(organizationId)}/usage.csv${search ? `?${search}` : ''}`;
}

/** The API's own words for a refused download (SPEC's {detail}), else its status. */
async function refusal(response: Response): Promise<string> {
  const body = (await response.json().catch(() => null)) as { detail?: unknown } | null;
  const detail = body?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) return detail.map((issue: { msg?: string }) => issue.msg ?? '').join('; ');
  return `HTTP ${response.status}`;
}

/**
 * The CSV export of every row the filters select. An organization's comes from the server (which names each row's
 * member and key and applies the role rules); the account's is built here from `accountPage`'s pages of 200
 * (at most EXPORT_MAX_ROWS). Gives the rows read so far (null when idle), the export, and why the last one failed.
 */
export function useCsvExport(filters: Filters, organizationId: string | null, accountPage: (cursor: string | null) => Promise<Row[]>): [number | null, () => Promise<void>, string | null] {
  const [exporting, setExporting] = useState<number | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const fileName = `baikal-usage-${new Date().toISOString().slice(0, 10)}.csv`;
  const exportOrganization = async (id: string) => {
    const response = await fetch(organizationCsvUrl(id, filters), { credentials: 'same-origin' });
    if (!response.ok) throw new Error(await refusal(response));
    save(await response.blob(), fileName);
  };
  const exportAccount = async () => {
    const rows: Row[] = [];
    let cursor: string | null = null;
    while (rows.length < EXPORT_MAX_ROWS) {
      const items = await accountPage(cursor);
      rows.push(...items);
      setExporting(rows.length);
      if (items.length < 200) break;
      cursor = justBefore(items[items.length - 1]!.createdAt);
    }
    const csv = [CSV_COLUMNS.join(','), ...rows.map((row) => CSV_COLUMNS.map((column) => csvCell((row as unknown as Record<string, unknown>)[column])).join(','))].join('\r\n');
    save(new Blob([csv], { type: 'text/csv' }), fileName);
  };
  const exportCsv = async () => {
    setExporting(0);
    setFailure(null);
    try {
      await (organizationId ? exportOrganization(organizationId) : exportAccount());
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error));
    } finally {
      setExporting(null);
    }
  };
  return [exporting, exportCsv, failure];
}
