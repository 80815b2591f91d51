import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { listenOnLoopback } from "./loopback.ts";

/**
 * An https server on a loopback port, for what must be https (a client ID metadata document's
 * URL): a certificate for 127.0.0.1 made with openssl, trusted by this test process only
 * (tls.setDefaultCACertificates), so the server's real TLS client checks it as any other.
 */
export async function listenHttpsOnLoopback(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ origin: string; close(): Promise<void> }> {
  const { key, cert } = trustedLoopbackCertificate();
  const listening = await listenOnLoopback(https.createServer({ key, cert }, handler));
  return { origin: `https://127.0.0.1:${listening.port}`, close: listening.close };
}

let made: { key: Buffer; cert: string } | undefined;

function trustedLoopbackCertificate(): { key: Buffer; cert: string } {
  if (made) return made;
  const dir = mkdtempSync(path.join(os.tmpdir(), "pm-tls-"));
  try {
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
        ...["-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem"), "-days", "1"],
        ...["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
      ],
      { stdio: "ignore" },
    );
    made = {
      key: readFileSync(path.join(dir, "key.pem")),
      cert: readFileSync(path.join(dir, "cert.pem"), "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  tls.setDefaultCACertificates([...tls.getCACertificates("default"), made.cert]);
  return made;
}
