// How many invitations and new sign-in links dashboard users may make: each one can e-mail any address from the
// service's own sender, so a hostile tenant must not turn the dashboard into a mail relay. The limits live here, in one
// place (docs/dashboard.md states them); the operator (callctl) is not limited.
export const PEOPLE_LINK_LIMITS = {
  /** Per dashboard user: invitations and new sign-in links in the last hour. */
  perUser: { count: 10, windowMs: 60 * 60 * 1000, window: 'hour' },
  /** Per agency (its own users and its clients' together): in the last 24 hours. */
  perAgency: { count: 30, windowMs: 24 * 60 * 60 * 1000, window: '24 hours' },
} as const;

/** The audit actions that count against the limits (made by a dashboard user). */
export const PEOPLE_LINK_ACTIONS = ['user_invited', 'sign_in_link_created'] as const;

/** An invitation or link made recently: by whom, when. */
export interface MadeLink {
  actorUserId: string | null;
  createdAt: Date;
}

export interface LinkLimitRefusal {
  limit: 'user' | 'agency';
  /** When one more is allowed again. */
  retryAt: Date;
  message: string;
}

/**
 * Whether `userId` may make one more invitation or link now, given what their agency made in the last 24 hours
 * (oldest first); the refusal says which limit and from when on it is allowed again.
 */
export function linkLimitRefusal(
  made: MadeLink[],
  userId: string,
  now: Date,
  formatTime: (at: Date) => string,
): LinkLimitRefusal | null {
  const { perUser, perAgency } = PEOPLE_LINK_LIMITS;
  const agency = made.filter((m) => m.createdAt.getTime() > now.getTime() - perAgency.windowMs);
  const mine = agency.filter(
    (m) => m.actorUserId === userId && m.createdAt.getTime() > now.getTime() - perUser.windowMs,
  );
  if (mine.length >= perUser.count) {
    const retryAt = new Date(mine[mine.length - perUser.count]!.createdAt.getTime() + perUser.windowMs);
    return {
      limit: 'user',
      retryAt,
      message: `You have made ${perUser.count} invitations and sign-in links in the last ${perUser.window}, the most one user may. Try again after ${formatTime(retryAt)}.`,
    };
  }
  if (agency.length >= perAgency.count) {
    const retryAt = new Date(agency[agency.length - perAgency.count]!.createdAt.getTime() + perAgency.windowMs);
    return {
      limit: 'agency',
      retryAt,
      message: `Your agency's users have made ${perAgency.count} invitations and sign-in links in the last ${perAgency.window}, the most an agency may. Try again after ${formatTime(retryAt)}, or ask an operator (callctl user create, callctl user link).`,
    };
  }
  return null;
}
