// Parts several page models share (a form's problem, the account a section is about, a one-time link); each page's
// own model is src/views/pages/<page>.ts, beside its template.

/** Every key of every member of a union (keyof a union is only the keys they share). */
export type KeysOf<T> = T extends unknown ? keyof T : never;

/** A form's problem, or null. */
export type Problem = string | null;
export type AccountKind = 'agency' | 'client';
export interface PasswordPolicy {
  min: number;
  max: number;
}
/** The account a section of API & Webhooks is about. */
export interface SectionAccount {
  id: string;
  name: string;
  kind: AccountKind;
}
export interface ApiWebhooksPlace {
  account: SectionAccount;
  /** The section's own page: /dashboard/settings/api-webhooks or a client's. */
  base: string;
}
/** A one-time link, shown once. */
export interface OneTimeLink {
  email: string;
  accountName: string;
  link: string;
  expires: string;
  emailedTo: string | null;
}
export interface EndpointState {
  url: string;
  enabled: boolean;
  disabledReason: string | null;
}
