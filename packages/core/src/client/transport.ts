// The Client's connections: two undici keep-alive pools (requests, capped, HTTP/1.1 unless asked; watches,
// uncapped, HTTP/2 when the server picks it) with the kubeconfig's TLS material, and HTTP/2 flow-control windows
// sized like Go's.
import { Agent, type Dispatcher } from "undici";
import type { KubeConfigLike } from "./kubeconfig.ts";

/**
 * HTTP/2 flow-control windows: how much of a response the server may send before the client acknowledges it.
 * undici's defaults (256 KiB per stream, 512 KiB per connection) make the server stop and wait for an
 * acknowledgement every few hundred KiB, a round trip each time: an uncompressed 15 MB list of 10,000
 * ConfigMaps took 230-310 ms on a local API server against 150-190 ms over HTTP/1.1, 190-250 ms with these
 * windows (docs/performance.md); the farther the server, the longer each wait. Go's HTTP/2 transport, and so
 * client-go, announces 4 MiB per stream. At most this much of a body the client does not read yet waits in
 * memory per stream (a watch whose consumer is busy).
 */
const H2_STREAM_WINDOW = 4 << 20;
/** The connection's window, shared by its streams (Go's is 1 GiB): four streams at full speed. */
const H2_CONNECTION_WINDOW = 16 << 20;

/** The connection pools of a client: requests (capped) and watches (uncapped). */
export interface Transport {
  requests: Dispatcher;
  watches: Dispatcher;
}

/**
 * Two keep-alive pools with the kubeconfig's TLS material (read once): one for requests, at most
 * `maxConnections`, and one for watches, uncapped.
 *
 * Why two: a watch holds its connection (HTTP/1.1) or a stream (HTTP/2) for minutes. Sharing one capped
 * pool, watches filled it (32 of them over HTTP/1.1, 3200 over HTTP/2: 32 connections x 100 streams) and
 * Lease renewals then waited for a watch to end, until leadership was lost. HTTP/2 alone (client-go's
 * answer: everything multiplexed on one connection) does not settle it: it is used only when the server
 * and every proxy on the way pick it through ALPN (never over plain HTTP), and a connection's streams are
 * capped too (undici's 100, less if the server advertises less; kube-apiserver advertises 1000). A
 * separate pool for watches does not depend on the protocol: a request never queues behind a watch.
 * The watch pool uses HTTP/2 when the server picks it, so many watches share few connections (it opens another
 * when one is full). The request pool keeps to HTTP/1.1 unless `requestsHttp2`: a request over Node's HTTP/2
 * streams cost more CPU than one over undici's HTTP/1.1 (bench/request-cost.ts, docs/performance.md), and
 * `maxConnections` keep-alive connections carry an operator's requests. A watch whose consumer is slow does not
 * stall the others on its connection: Node.js returns the connection-level flow-control window as data arrives;
 * only the slow stream's own window fills.
 */
export async function openTransport(
  kubeConfig: KubeConfigLike,
  options: { http2: boolean; requestsHttp2: boolean; maxConnections: number },
): Promise<Transport> {
  const tls: {
    ca?: Buffer;
    cert?: Buffer;
    key?: Buffer;
    rejectUnauthorized?: boolean;
    servername?: string;
  } = {};
  await kubeConfig.applyToHTTPSOptions(tls as never);
  const connect: Record<string, unknown> = {};
  for (const k of ["ca", "cert", "key", "rejectUnauthorized", "servername"] as const) {
    if (tls[k] !== undefined) connect[k] = tls[k];
  }
  const common = {
    connect,
    keepAliveTimeout: 30_000,
    // undici 8.13 reads the stream window from this option only (its typings point to
    // h2Options.settings.initialWindowSize, which it does not apply); a test checks what the server gets.
    initialWindowSize: H2_STREAM_WINDOW,
    h2Options: { connectionWindowSize: H2_CONNECTION_WINDOW },
  };
  return {
    requests: new Agent({
      ...common,
      allowH2: options.http2 && options.requestsHttp2,
      connections: options.maxConnections,
    }),
    watches: new Agent({ ...common, allowH2: options.http2 }),
  };
}
