// The dialer port: what the dispatcher needs from a telephony provider. Adapters: simulated, twilio, telnyx, signalwire.
import type { VoicemailPolicy } from '../../schemas/vocabulary.js';

export interface DialRequest {
  callId: string;
  /** The call's account (its carrier chose this dialer); logs name it. */
  accountId?: string;
  /**
   * The call's attempt, from 1 when absent (a retried call keeps its id): callbacks name it, so that a late one of an
   * earlier attempt is told apart from the current attempt's.
   */
  attempt?: number;
  /** Destination, E.164. */
  to: string;
  /** The agent's caller ID, E.164. */
  from: string;
  agentId: string;
  name: string | null;
  email: string | null;
  /**
   * The agent's answering-machine detection when the call is dialled: `off` dials as before (no detection, no
   * answered_by); otherwise the provider is asked to tell a person from a machine, and on a machine the call hangs up
   * or leaves `voicemailMessage`.
   */
  voicemail: VoicemailPolicy;
  voicemailMessage: string | null;
}

export interface Dialer {
  readonly kind: 'simulated' | 'twilio' | 'telnyx' | 'signalwire';
  /** Asks the provider to place the call; resolves with the provider's id for it. Throws if it was refused. */
  dial(request: DialRequest): Promise<{ providerCallId: string }>;
}
