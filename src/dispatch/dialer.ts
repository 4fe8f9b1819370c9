// The dialer port: what the dispatcher needs from a telephony provider. Adapters: simulated, twilio.

export interface DialRequest {
  callId: string;
  /** Destination, E.164. */
  to: string;
  /** The agent's caller ID, E.164. */
  from: string;
  agentId: string;
  name: string | null;
  email: string | null;
}

export interface Dialer {
  readonly kind: 'simulated' | 'twilio';
  /** Asks the provider to place the call; resolves with the provider's id for it. Throws if it was refused. */
  dial(request: DialRequest): Promise<{ providerCallId: string }>;
}
