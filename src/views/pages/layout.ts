// The layout's model (src/views/pages/layout.eta): what every page shows around its body, added by reply.page.
import type { Role } from '../../domain/roles.js';
import type { ActiveUser } from '../../storage/index.js';

/** What the layout (src/views/layout.eta) reads besides the page's body: `title` from the page, the rest added. */
export interface LayoutModel {
  /** The page's <title> and heading. */
  title: string;
  viewer: ActiveUser | null;
  navigation: { label: string; href?: string; current: boolean }[];
  /**
   * Whether the viewer has at least `least` in the account the page acts in (false for a visitor): a page renders a
   * form, button or link only for the roles its route lets through (plugins/dashboard/roles.ts); where a whole section
   * is an action, the others read a line naming the role needed.
   */
  can: (least: Role) => boolean;
  /** Makes the CSRF token (and sets its cookie) only when a template has a form. */
  csrf: () => string;
  hasSession: boolean;
  flash: { kind: 'ok' | 'error'; text: string } | null;
  /**
   * The zone the page's times are in, for the header's switch (null for a visitor): `own`, the viewer's zone (null:
   * never chosen, or UTC); `inUtc`, this session shows UTC instead; `back`, the page the switch comes back to.
   */
  times: { own: string | null; inUtc: boolean; back: string } | null;
  /** The page's own URL (path and query string): where its live refresh asks for it again. */
  pageUrl: string;
  /**
   * From the page: absent, a page that never refreshes itself; true, one showing a call still initiated, dialling or
   * in progress, which asks for itself again every few seconds (src/views/assets/live.js); false, one that could but
   * need not (the refreshed copy of a page whose calls have ended: polling stops there).
   */
  live?: boolean;
}

/** Set on every dashboard reply by plugins/mailer.ts (`mailEnabledLocals`): whether the service sends e-mail. */
export interface PageLocals {
  mailEnabled: boolean;
}
