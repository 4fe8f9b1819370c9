// Whom a dashboard user may see and manage: an agency user the agency and all its clients; a client user only
// their client. Anything else is answered as if it did not exist (404), never 403.
export interface Viewer {
  accountId: string;
  accountKind: 'agency' | 'client';
  /** The agency at the top: the account itself for agency users. */
  agencyId: string;
}

/** An account as tenancy needs it: its id and its agency (null for an agency). */
export interface ManagedAccount {
  id: string;
  agencyId: string | null;
}

export function canManageAccount(viewer: Viewer, account: ManagedAccount): boolean {
  if (account.id === viewer.accountId) return true;
  return viewer.accountKind === 'agency' && account.agencyId === viewer.accountId;
}

/** Agency-only pages (clients, the agency's users): a client user gets 404 there too. */
export function isAgencyViewer(viewer: Viewer): boolean {
  return viewer.accountKind === 'agency';
}
