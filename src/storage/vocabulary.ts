// Compile-time proof that the call and delivery vocabulary (schemas/vocabulary.ts) and the database's enums,
// as Prisma generates them from schema.prisma, are the same sets: adding a value on one side only fails
// `npm run typecheck`.
import type {
  AnsweredBy as DbAnsweredBy,
  CallStatus as DbCallStatus,
  DeliveryStatus as DbDeliveryStatus,
  FailureReason as DbFailureReason,
  HandoffKind as DbHandoffKind,
  TimezoneSource as DbTimezoneSource,
  VoicemailPolicy as DbVoicemailPolicy,
  WindowTimezone as DbWindowTimezone,
} from '../generated/prisma/enums.js';
import type {
  AnsweredBy,
  CallStatus,
  DeliveryStatus,
  FailureReason,
  HandoffKind,
  TimezoneSource,
  VoicemailPolicy,
  WindowTimezone,
} from '../../schemas/vocabulary.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

export const VOCABULARY_MATCHES_DATABASE: [
  Same<CallStatus, DbCallStatus>,
  Same<FailureReason, DbFailureReason>,
  Same<DeliveryStatus, DbDeliveryStatus>,
  Same<AnsweredBy, DbAnsweredBy>,
  Same<VoicemailPolicy, DbVoicemailPolicy>,
  Same<WindowTimezone, DbWindowTimezone>,
  Same<TimezoneSource, DbTimezoneSource>,
  Same<HandoffKind, DbHandoffKind>,
] = [true, true, true, true, true, true, true, true];
