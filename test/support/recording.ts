/**
 * Where responses received outside `Stack.api()` are reported for the contract check, by the
 * gateway's base URL. Kept free of imports so pure unit tests can use the helpers that call it.
 */
export interface ResponseSink {
  /** The gateway's current base URL (it changes when the gateway restarts). */
  baseUrl(): string;
  record(method: string, path: string, res: Response, requestBody?: unknown): void;
}

const sinks = new Set<ResponseSink>();

export function addResponseSink(sink: ResponseSink): () => void {
  sinks.add(sink);
  return () => sinks.delete(sink);
}

/** Reports a response to the stack whose gateway answered it, if one is running in this process. */
export function recordResponse(url: string, method: string, res: Response, requestBody?: unknown): void {
  for (const sink of sinks) {
    const base = sink.baseUrl();
    if (base && url.startsWith(base)) sink.record(method, url.slice(base.length), res, requestBody);
  }
}
