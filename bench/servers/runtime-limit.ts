// The runtime limit: a bare node:http server answering every request with a body serialized once,
// of the size of formdeck's default list response. No framework, no database: what this machine
// and Node can do at most, to read formdeck's figures against.
import http from "node:http";
import { listenAddress, requiredEnv } from "./server-env.ts";

const body = Buffer.from(requiredEnv("RESPONSE_BODY"));
const headers = {
  "content-type": "application/json; charset=utf-8",
  "content-length": String(body.length),
};

const { port, host } = listenAddress();
http
  .createServer((_request, response) => {
    response.writeHead(200, headers);
    response.end(body);
  })
  .listen(port, host);
