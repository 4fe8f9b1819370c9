// Voicemail: the message an agent leaves on an answering machine, as it is spoken for one call ({{name}} filled in).

/** The placeholder the agent's message may use for the trigger's `name` (spaces inside the braces are tolerated). */
const NAME_PLACEHOLDER = /\{\{\s*name\s*\}\}/g;
/** A placeholder with the blanks before it: removed whole when the call has no name ("Hi {{name}}," -> "Hi,"). */
const NAME_PLACEHOLDER_WITH_LEAD = /[^\S\n]*\{\{\s*name\s*\}\}/g;

/**
 * What text-to-speech can say and XML 1.0 can carry: control characters (kept line breaks and tabs included, since
 * a pause is not read from them) become spaces, noncharacters and unpaired surrogates go, and blanks collapse.
 */
function speakable(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex -- the control characters are what this replaces
      .replace(/[\u0000-\u001F\u007F-\u009F\u2028\u2029]/g, ' ')
      .replace(/[\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '')
      .replace(/\s+/g, ' ')
      .trim()
  );
}

/**
 * The agent's voicemail message for a call, ready to be spoken, or null when there is nothing to say (no message, or
 * one that is blank). `{{name}}` becomes the call's name; a call without a name (or with a blank one) drops the
 * placeholder with the blanks before it and any punctuation that would then open the message, so that "Hi {{name}},
 * this is Acme" reads "Hi, this is Acme" rather than "Hi , this is Acme", and "{{name}}, please call us" reads
 * "please call us".
 */
export function voicemailText(message: string | null, name: string | null): string | null {
  if (message === null) return null;
  const spokenName = name === null ? '' : speakable(name);
  const filled =
    spokenName === ''
      ? message.replace(NAME_PLACEHOLDER_WITH_LEAD, '').replace(/^[\s,;:.!?-]+/, '')
      : message.replace(NAME_PLACEHOLDER, () => spokenName);
  const text = speakable(filled);
  return text === '' ? null : text;
}
