// Compile-time proof that the call and delivery vocabulary (src/domain/call-vocabulary.ts) and the database's enums,
// as Prisma generates them from schema.prisma, are the same sets: adding a value on one side only fails
// `npm run typecheck`.
import type {
  CallStatus as DbCallStatus,
  DeliveryStatus as DbDeliveryStatus,
  FailureReason as DbFailureReason,
} from '../generated/prisma/enums.js';
import type { CallStatus, DeliveryStatus, FailureReason } from '../domain/call-vocabulary.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

export const VOCABULARY_MATCHES_DATABASE: [
  Same<CallStatus, DbCallStatus>,
  Same<FailureReason, DbFailureReason>,
  Same<DeliveryStatus, DbDeliveryStatus>,
] = [true, true, true];
