// The dashboard's navigation, in one place: a page that does not exist yet has no link and says "coming".
import type { ActiveUser } from '../storage/index.js';

export interface NavItem {
  label: string;
  /** Absent: the page is not built yet (shown as coming, never a broken link). */
  href?: string;
  agencyOnly?: boolean;
}

export const NAVIGATION: NavItem[] = [
  { label: 'Overview', href: '/dashboard' },
  { label: 'Calls', href: '/dashboard/calls' },
  { label: 'Agents', href: '/dashboard/agents' },
  { label: 'Clients', href: '/dashboard/clients', agencyOnly: true },
  { label: 'Do-not-call list', href: '/dashboard/do-not-call' },
  { label: 'Calling rules', href: '/dashboard/calling-rules' },
  { label: 'Settings → API & Webhooks', href: '/dashboard/settings/api-webhooks' },
  { label: 'Settings → Carrier', href: '/dashboard/settings/carrier' },
  { label: 'Users', href: '/dashboard/users' },
  { label: 'Audit log', href: '/dashboard/audit-log' },
  { label: 'Account', href: '/dashboard/account' },
];

/** What `viewer` sees, with the current page marked. */
export function navigationFor(viewer: ActiveUser, currentPath: string) {
  return NAVIGATION.filter((item) => !item.agencyOnly || viewer.accountKind === 'agency').map((item) => ({
    ...item,
    current: item.href !== undefined && item.href === currentPath,
  }));
}
