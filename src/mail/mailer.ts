// Sending the dashboard's e-mails (invitations, sign-in and password-reset links) through SMTP_URL with nodemailer.
// Every send is fire-and-forget for the request that causes it: a failure or a slow server is logged, never shown.
import nodemailer, { type Transporter } from 'nodemailer';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface MailLog {
  warn(obj: object, msg: string): void;
}

export class Mailer {
  private readonly transport: Transporter;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    smtpUrl: string,
    private readonly from: string,
    private readonly log: MailLog,
  ) {
    // Bounded waits: a server that never answers must not keep a send (or the shutdown waiting for it) forever.
    this.transport = nodemailer.createTransport({
      url: smtpUrl,
      connectionTimeout: 15_000,
      greetingTimeout: 15_000,
      socketTimeout: 30_000,
    });
  }

  /** Sends now and says whether the server accepted it (callctl waits for this). */
  async send(message: MailMessage): Promise<boolean> {
    try {
      await this.transport.sendMail({ from: this.from, ...message });
      return true;
    } catch (error) {
      // The address is the user's own; the error names the SMTP server's answer, never the link.
      this.log.warn(
        {
          err: { message: (error as Error).message, code: (error as { code?: string }).code },
          subject: message.subject,
        },
        'e-mail not sent',
      );
      return false;
    }
  }

  /**
   * Runs `task` (which may look users up and send) after the current request has answered, so that its outcome and
   * its time are nobody's to observe; errors are logged. `settled()` waits for every task started so far.
   */
  later(task: () => Promise<unknown>): void {
    const run = new Promise<void>((resolve) => setImmediate(resolve))
      .then(task)
      .then(
        () => undefined,
        (error: Error) => this.log.warn({ err: { message: error.message } }, 'background e-mail task failed'),
      )
      .finally(() => this.pending.delete(run));
    this.pending.add(run);
  }

  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Waits for the sends under way, then closes the connections. */
  async close(): Promise<void> {
    await this.settled();
    this.transport.close();
  }
}
