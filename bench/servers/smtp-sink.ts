// The notifications bench's SMTP server: takes every message and throws it away, so that the
// intake's owner emails have somewhere to go. No TLS, any credentials.
import { SMTPServer } from "smtp-server";
import { listenAddress } from "./server-env.ts";

const server = new SMTPServer({
  authOptional: true,
  allowInsecureAuth: true,
  disabledCommands: ["STARTTLS"],
  logger: false,
  // Its default looks the client's address up in DNS on every connection.
  disableReverseLookup: true,
  onData(stream, _session, callback) {
    stream.on("end", () => callback());
    stream.resume();
  },
});
const { port, host } = listenAddress();
server.listen(port, host);
