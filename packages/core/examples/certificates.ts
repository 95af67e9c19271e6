// Example: the certificates helper. Makes a CA, a server and a client certificate it signs, serves HTTPS that
// requires a client certificate, calls it with and without one, and asks whether the server certificate is
// due for renewal now and in 80 days. No cluster needed.
//   node packages/core/examples/certificates.ts
import { createServer, request } from "node:https";
import type { AddressInfo } from "node:net";
import { certificateInfo, createCA, issueCertificate, renewalReason } from "@capstan/core";

const DAY = 86_400_000;
const ca = await createCA({ commonName: "example CA" });
const server = await issueCertificate(ca, {
  hosts: ["localhost", "127.0.0.1"],
  usages: ["server"],
  validityMs: 90 * DAY,
});
const client = await issueCertificate(ca, {
  hosts: [],
  commonName: "me",
  usages: ["client"],
  validityMs: 90 * DAY,
});

const https = createServer(
  { ...server, ca: ca.cert, requestCert: true, rejectUnauthorized: true },
  (req, res) => {
    res.end(`hello ${(req.socket as import("node:tls").TLSSocket).getPeerCertificate().subject.CN}\n`);
  },
);
await new Promise<void>((resolve) => https.listen(0, "127.0.0.1", resolve));
const { port } = https.address() as AddressInfo;

function get(cert?: { cert: string; key: string }): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, ca: ca.cert, ...cert }, (res) => {
      let body = "";
      res.on("data", (d) => {
        body += d;
      });
      res.on("end", () => resolve(body.trim()));
    });
    req.on("error", (err) => resolve(`refused (${err.message})`));
    req.end();
  });
}

console.log("with a client certificate:   ", await get(client));
console.log("without a client certificate:", await get());
console.log("server certificate:", certificateInfo(server.cert));
for (const days of [0, 80]) {
  const now = new Date(Date.now() + days * DAY);
  const why = renewalReason(server, { ca: ca.cert, hosts: ["localhost"], now, renewBeforeMs: 30 * DAY });
  console.log(`in ${days} days: ${why ?? "no renewal needed"}`);
}
https.close();
