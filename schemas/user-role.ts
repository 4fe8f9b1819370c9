// The roles of dashboard people, written once for src/domain/roles.ts (what each may do) and the Users page's forms
// (whose schemas state them), from the least to the most.
export const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
