// TwiML (LaML on SignalWire) the callback routes answer with: the hand-off to the agent's runtime (a media stream with
// its parameters, or SIP), the message left on a machine, and a hang-up.
// The TwiML builder alone: the package's root would bring its whole REST client into the server's bundle (megabytes
// to load at every start) for one class. test/dispatch/voicemail.test.ts checks it is the root's twiml.VoiceResponse.
import VoiceResponse from 'twilio/lib/twiml/VoiceResponse.js';
import type { HandoffPair } from '../../../schemas/agent-runtime.js';

export function escapeXml(value: string): string {
  // Control characters, noncharacters and unpaired surrogates are not allowed in XML 1.0 at all: Twilio would reject
  // the whole document. Markup and quotes are entities. Every other character a parser would not hand back as written
  // is a character reference: tab, LF and CR (turned into spaces inside an attribute value), and the whole class of
  // line and paragraph separators and C1 controls an XML 1.1 parser normalises or refuses (DEL, NEL and the rest of
  // U+007F-U+009F, LS U+2028, PS U+2029). Twilio's SDK references only tab, LF and CR; a reference is read back the
  // same by every parser.
  return (
    value
      // eslint-disable-next-line no-control-regex -- the control characters are what this removes
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|\p{Cs}/gu, '')
      .replace(/[&<>"']/g, (c) => XML_ENTITIES[c]!)
      .replace(/[\t\n\r\u007F-\u009F\u2028\u2029]/g, (c) => `&#x${c.charCodeAt(0).toString(16).toUpperCase()};`)
  );
}
const XML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/**
 * The TwiML that connects an answered call to the voice-agent runtime's media stream with what the hand-off carries
 * (src/dispatch/hand-off.ts), in order. Written here rather than by Twilio's builder: its builder writes line and
 * paragraph separators raw, which a parser reads back as spaces (test/dispatch/twiml-escape.test.ts).
 */
export function streamTwiml(streamUrl: string, parameters: readonly HandoffPair[]): string {
  const tags = parameters
    .map(({ name, value }) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${escapeXml(streamUrl)}">${tags}</Stream></Connect></Response>`;
}

/** The TwiML that bridges an answered call to a SIP destination (its headers already in the URI: sipTarget). */
export function sipTwiml(uri: string): string {
  const response = new VoiceResponse();
  response.dial().sip(uri);
  return response.toString();
}

export const HANGUP = '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>';

/** The TwiML that leaves a message on a machine and hangs up (Twilio's own builder escapes the text). */
export function voicemailTwiml(text: string): string {
  const response = new VoiceResponse();
  response.say(text);
  response.hangup();
  return response.toString();
}
