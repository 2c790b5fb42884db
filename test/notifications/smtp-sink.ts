import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  /** The envelope's recipients, as RCPT TO gave them. */
  recipients: string[];
  /** The credentials the client logged in with. */
  user: string | undefined;
  parsed: ParsedMail;
}

const smtpError = (code: number, message: string) =>
  Object.assign(new Error(message), { responseCode: code });

/**
 * An SMTP server in the test's process standing in for the operator's: it takes every message,
 * parsed with mailparser, and answers as the test tells it to: a recipient refused, a failure on
 * the next messages, or down altogether.
 */
export class SmtpSink {
  readonly received: ReceivedMail[] = [];
  /** Recipients refused at RCPT TO with this code (550: permanent, 450: temporary). */
  readonly refuse = new Map<string, number>();
  /** The next messages, one per entry, are refused at DATA with these codes. */
  readonly failNext: number[] = [];
  /** How long the answer to a message's data waits: a slow server. */
  dataDelayMs = 0;
  /** Messages whose data arrived, answered or not yet. */
  dataStarted = 0;
  port = 0;
  private server: SMTPServer | null = null;

  private create() {
    return new SMTPServer({
      authOptional: true,
      allowInsecureAuth: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onAuth: (auth, _session, callback) => callback(null, { user: auth.username }),
      onRcptTo: (address, _session, callback) => {
        const code = this.refuse.get(address.address.toLowerCase());
        callback(code ? smtpError(code, `mailbox ${address.address} unavailable`) : null);
      },
      onData: (stream, session, callback) => {
        this.dataStarted++;
        simpleParser(stream).then(
          async (parsed) => {
            if (this.dataDelayMs > 0) {
              await new Promise((resolve) => setTimeout(resolve, this.dataDelayMs));
            }
            const code = this.failNext.shift();
            if (code) return callback(smtpError(code, "try again later"));
            this.received.push({
              recipients: session.envelope.rcptTo.map((rcpt) => rcpt.address),
              user: session.user as string | undefined,
              parsed,
            });
            callback();
          },
          (error: Error) => callback(error),
        );
      },
    });
  }

  /** Listens on 127.0.0.1: a new port the first time, the same one after `down`. */
  async up(): Promise<void> {
    const server = this.create();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening: connections are refused until `up`. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The messages whose subject is `subject`. */
  withSubject(subject: string): ReceivedMail[] {
    return this.received.filter((mail) => mail.parsed.subject === subject);
  }
}
