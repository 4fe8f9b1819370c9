// The agent form's hand-off fields: which kind (a media stream or a SIP destination), each kind's address and its
// static name/value pairs, one "name=value" a line. The schema bounds them and states their syntax; what needs more
// (a host that is local, a reserved or repeated name) is worded next to the field by the page and checked again by
// src/admin/agents.ts on save (src/domain/hand-off-settings.ts, callctl's rules).
import { Type } from '@sinclair/typebox';
import {
  HANDOFF_STATIC_MAX,
  HANDOFF_URI_MAX,
  HANDOFF_VALUE_MAX,
  SIP_HEADER_NAME,
  STREAM_PARAMETER_NAME,
} from '../agent-runtime.js';
import { blankOr } from './forms.js';

/** Lines of text: no control character but line breaks (CR, LF). */
export const LINES_TEXT = '^[^\\u0000-\\u0009\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]*$';
/** A character of an address: no blank, backslash or control character. */
const ADDRESS_CHARACTER = '[^\\s\\\\\\u0000-\\u001f\\u007f-\\u009f]';
/** The longest pairs text read: every pair at its longest, with room for blanks. */
const PAIRS_MAX_LENGTH = HANDOFF_STATIC_MAX * (40 + 1 + HANDOFF_VALUE_MAX + 20);

export const handoffFields = {
  handoff: Type.Optional(
    Type.Union([Type.Literal('stream'), Type.Literal('sip')], {
      description:
        "How an answered call reaches the voice-agent runtime: stream (a media stream, the service's default) or sip " +
        "(a SIP destination); the other kind's fields are kept, unused; absent: stream on a new agent, unchanged on " +
        'an edit',
    }),
  ),
  stream_url: Type.Optional(
    Type.String({
      maxLength: 1000,
      pattern: blankOr(`[Ww][Ss][Ss]://${ADDRESS_CHARACTER}*`),
      description:
        `The stream's address: wss:// only, at most ${HANDOFF_URI_MAX} characters, no user name or password, a host ` +
        "reachable on the internet; empty: the service's AGENT_STREAM_URL; absent: unchanged (a new agent: empty)",
    }),
  ),
  stream_parameters: Type.Optional(
    Type.String({
      maxLength: PAIRS_MAX_LENGTH,
      pattern: LINES_TEXT,
      description:
        `Static stream parameters, one name=value a line: at most ${HANDOFF_STATIC_MAX}, names ${STREAM_PARAMETER_NAME} ` +
        `each once and none the hand-off sends itself (call_id, agent_id, ...), values at most ${HANDOFF_VALUE_MAX} ` +
        'characters; empty: none; absent: unchanged',
    }),
  ),
  sip_uri: Type.Optional(
    Type.String({
      maxLength: 1000,
      pattern: blankOr(`[Ss][Ii][Pp][Ss]?:${ADDRESS_CHARACTER.replace('[^', '[^?')}*`),
      description:
        `The SIP destination: sip:user@host[:port][;params] or sips:, at most ${HANDOFF_URI_MAX} characters, no ` +
        '?headers (they are sip_headers), a host reachable on the internet; needed for sip; empty: none; absent: ' +
        'unchanged',
    }),
  ),
  sip_headers: Type.Optional(
    Type.String({
      maxLength: PAIRS_MAX_LENGTH,
      pattern: LINES_TEXT,
      description:
        `Static SIP headers, one X-Name=value a line: at most ${HANDOFF_STATIC_MAX}, names ${SIP_HEADER_NAME} each ` +
        `once in any case and none the hand-off sends itself (X-Call-Id, ...), values at most ${HANDOFF_VALUE_MAX} ` +
        'printable characters; empty: none; absent: unchanged',
    }),
  ),
};
