import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { API_BASE } from '@erp/contracts';
import { webhooksDocument } from '../../services/gateway/src/openapi/openapi';
import { OUTSIDE_OPERATIONS, stableAnswers, type OpenApiExamples } from '../../services/gateway/src/openapi/openapi-examples';
import { partnerApiDocument } from '../../services/gateway/src/openapi/write-openapi';

/** One response as a test received it. */
export interface Exchange {
  method: string;
  /** Path and query as requested, e.g. `/api/external/v1/sales?page=2`. */
  url: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The request's body as sent, when it was text. */
  requestBody?: string;
}

/** An exchange checked against the document: the operation it matched, and what does not conform. */
export interface Verdict {
  exchange: Exchange;
  /** `GET /sales/{id}`; undefined when the path is not in the document (an unknown route). */
  operation?: string;
  /** Values of the path's parameters (`{id: '12'}`). */
  params?: Record<string, string>;
  problems: string[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Route {
  /** Which document holds it (its id for ajv): `openapi` or `webhooks`. */
  doc: string;
  template: string;
  /** Where the path item's server puts it, e.g. `/api/external/v1`. */
  base: string;
  pattern: RegExp;
  item: Json;
}

/**
 * The document as this server is held to it: its answers' objects closed. The published document
 * lets answers gain fields in a later 1.x, so clients accept them; this server's own answers must
 * still carry only what the document describes, or a field would ship undocumented.
 */
function closeObjects(node: Json): Json {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (node === null || typeof node !== 'object') return node;
  const closed = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, closeObjects(value)]));
  if (closed.type === 'object' && closed.properties && !('additionalProperties' in closed)) closed.additionalProperties = false;
  return closed;
}

/**
 * The OpenAPI documents the gateway serves (the partner API's and the webhooks'), compiled for checking responses: status declared,
 * headers declared (required ones present, values of the declared type, no undeclared `X-`
 * header), body valid against the declared schema (JSON Schema 2020-12, formats included), with
 * no field the document does not describe.
 */
export class Contract {
  private readonly ajv: Ajv2020;
  private readonly routes: Route[];
  private readonly validators = new Map<string, ValidateFunction>();

  private readonly documents: Record<string, Json>;

  constructor(
    readonly document: Json = partnerApiDocument(),
    readonly webhooks: Json = webhooksDocument(),
  ) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.documents = { openapi: closeObjects(document), webhooks: closeObjects(webhooks) };
    // A document is not a JSON Schema itself: skip the meta-schema check, resolve pointers into it.
    for (const [id, doc] of Object.entries(this.documents)) this.ajv.addSchema(doc, id, undefined, false);
    this.routes = Object.entries(this.documents)
      .flatMap(([doc, { servers, paths }]) =>
        Object.entries<Json>(paths).map(([template, item]) => ({
          doc,
          template,
          item,
          base: (item.servers?.[0]?.url ?? servers?.[0]?.url ?? '') as string,
        })),
      )
      .map(({ doc, template, item, base }) => ({
        doc,
        template,
        base,
        // Literal segments win over parameters (`/sales/summary` before `/sales/{id}`).
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, '(?<$1>[^/]+)')}/?$`),
        item,
      }))
      .sort((a, b) => (a.template.match(/\{/g) ?? []).length - (b.template.match(/\{/g) ?? []).length);
  }

  /** Whether `body` is valid against the JSON request body of `operation` (`POST /sales`). */
  validRequestBody(operation: string, body: unknown): boolean {
    const [method, template] = operation.toLowerCase().split(' ') as [string, string];
    const route = this.routes.find((r) => r.template.toLowerCase() === template);
    if (!route?.item[method]?.requestBody) return false;
    const pointer = `${route.doc}#/paths/${escape(route.template)}/${method}/requestBody/content/application~1json/schema`;
    return this.compile(pointer, { $ref: pointer })(body);
  }

  /** Every operation of the documents, as `POST /sales`. */
  operations(): string[] {
    return this.routes.flatMap((r) =>
      ['get', 'post', 'put', 'delete'].filter((m) => r.item[m]).map((m) => `${m.toUpperCase()} ${r.template}`),
    );
  }

  check(exchange: Exchange): Verdict {
    const pathname = new URL(exchange.url, 'http://localhost').pathname;
    const route = this.routes.find((r) => pathname.startsWith(r.base) && r.pattern.test(pathname.slice(r.base.length)));
    if (!route) return { exchange, problems: [] };
    const method = exchange.method.toLowerCase();
    const operation = `${exchange.method.toUpperCase()} ${route.template}`;
    const params = { ...route.pattern.exec(pathname.slice(route.base.length))!.groups };
    const op = route.item[method];
    if (!op) {
      // A method the path does not have: the gateway's 405 with the error envelope.
      if (method === 'head') return { exchange, operation, problems: [] };
      const problems: string[] = [];
      if (exchange.status !== 405) problems.push(`undocumented method answered ${exchange.status}, not 405`);
      if (!exchange.headers.allow) problems.push('405 without Allow');
      problems.push(...this.body(exchange, `${route.doc}#/components/schemas/Error`));
      return { exchange, operation, problems };
    }
    const pointer = `${route.doc}#/paths/${escape(route.template)}/${method}/responses`;
    let response = op.responses[String(exchange.status)];
    let responsePointer = `${pointer}/${exchange.status}`;
    if (!response) return { exchange, operation, problems: [`status ${exchange.status} is not declared`] };
    if (response.$ref) {
      responsePointer = `${route.doc}${response.$ref}`;
      response = this.resolve(route.doc, response.$ref);
    }
    return {
      exchange,
      operation,
      params,
      problems: [...this.headers(route.doc, exchange, response), ...this.content(exchange, response, responsePointer)],
    };
  }

  private headers(doc: string, exchange: Exchange, response: Json): string[] {
    const problems: string[] = [];
    const declared = new Map<string, Json>(
      Object.entries<Json>(response.headers ?? {}).map(([name, h]) => [name.toLowerCase(), h.$ref ? this.resolve(doc, h.$ref) : h]),
    );
    for (const [name, header] of declared) {
      const value = exchange.headers[name];
      if (value === undefined) {
        if (header.required) problems.push(`header ${name} is required and missing`);
        continue;
      }
      const parsed =
        header.schema?.type === 'integer' || header.schema?.type === 'number'
          ? /^-?\d+(\.\d+)?$/.test(value)
            ? Number(value)
            : value
          : value;
      const validate = this.compile(`header:${JSON.stringify(header.schema)}`, header.schema ?? {});
      if (!validate(parsed)) problems.push(`header ${name}: ${this.ajv.errorsText(validate.errors)} (got ${value})`);
    }
    for (const name of Object.keys(exchange.headers)) {
      if (name.startsWith('x-') && !declared.has(name)) problems.push(`header ${name} is not declared`);
    }
    return problems;
  }

  private content(exchange: Exchange, response: Json, pointer: string): string[] {
    const content = response.content ?? {};
    const types = Object.keys(content);
    if (types.length === 0) return exchange.body ? ['a body was sent where none is declared'] : [];
    const type = (exchange.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (!types.includes(type)) return [`content type ${type || '(none)'} is not declared (${types.join(', ')})`];
    if (type !== 'application/json') return [];
    return this.body(exchange, `${pointer}/content/${escape(type)}/schema`);
  }

  private body(exchange: Exchange, pointer: string): string[] {
    let parsed: unknown;
    try {
      parsed = JSON.parse(exchange.body);
    } catch {
      return ['the body is not JSON'];
    }
    const validate = this.compile(pointer, { $ref: pointer });
    return validate(parsed) ? [] : [`body: ${this.ajv.errorsText(validate.errors, { dataVar: 'body', separator: '; ' })}`];
  }

  private compile(key: string, schema: Json): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.validators.set(key, validate);
    }
    return validate;
  }

  private resolve(doc: string, ref: string): Json {
    return ref
      .replace(/^#\//, '')
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((node: Json, part) => node?.[part], this.documents[doc]);
  }
}

/** JSON pointer escaping of one segment. */
function escape(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

let shared: Contract | undefined;

/** The contract compiled once per test file. */
export function contract(): Contract {
  return (shared ??= new Contract());
}

/**
 * Collects the responses a test receives and checks them against the OpenAPI document. The body
 * is read from a clone, so the test's own reading of the response is untouched.
 */
export class ContractRecorder {
  private readonly pending: Array<Promise<Exchange | undefined>> = [];

  record(method: string, url: string, res: Response, requestBody?: unknown): void {
    const copy = res.clone();
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => (headers[name.toLowerCase()] = value));
    this.pending.push(
      copy.text().then(
        (body) => ({
          method: method.toUpperCase(),
          url,
          status: res.status,
          headers,
          body,
          ...(typeof requestBody === 'string' ? { requestBody } : {}),
        }),
        // The connection was cut (a stopped gateway): nothing to check.
        () => undefined,
      ),
    );
  }

  /** Every recorded exchange with what it breaks of the document. */
  async verdicts(): Promise<Verdict[]> {
    const exchanges = (await Promise.all(this.pending)).filter((e): e is Exchange => e !== undefined);
    return exchanges.map((e) => contract().check(e));
  }

  /**
   * Adds the conforming exchanges to the examples file of the document (see `OpenApiExamples`):
   * per operation the first successful request, the first answer of each status and of each
   * refusal's reason; the refusals no operation gives (an unknown route, a method the path does
   * not have, a request the HTTP parser refused) under `OUTSIDE_OPERATIONS`. Answers are kept as
   * `stableAnswers` makes them, and one longer than `MAX_EXAMPLE_CHARS` by the members that fit
   * when they still conform. What the file already holds stays, so the files of one run add to it
   * in the order they ran; operations and refusals are written in name order.
   */
  async saveExamples(file: string): Promise<void> {
    const examples: OpenApiExamples = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
    for (const verdict of await this.verdicts()) {
      const { exchange, operation, params, problems } = verdict;
      if (problems.length > 0 || !exchange.body) continue;
      const isJson = (exchange.headers['content-type'] ?? '').startsWith('application/json');
      const answer = isJson ? exampleOf(verdict) : undefined;
      if (!operation || exchange.status === 405) {
        if (typeof answer?.reason === 'string')
          ((examples[OUTSIDE_OPERATIONS] ??= { responses: {} }).refusals ??= {})[answer.reason] ??= answer;
        continue;
      }
      const entry = (examples[operation] ??= { responses: {} });
      if (answer !== undefined) {
        entry.responses[String(exchange.status)] ??= answer;
        // One refusal per reason: a status has several (422 is an unknown field, missing stock, …).
        if (exchange.status >= 400 && typeof answer?.reason === 'string') (entry.refusals ??= {})[answer.reason] ??= answer;
      }
      if (exchange.status >= 300 || entry.request) continue;
      const query = Object.fromEntries(new URL(exchange.url, 'http://localhost').searchParams);
      const body = exchange.requestBody !== undefined ? parseJson(exchange.requestBody) : undefined;
      // A form body (WooCommerce's ping) is no JSON example; a body the document refuses (an import with an invalid item) is no example either.
      if (
        exchange.method !== 'GET' &&
        exchange.method !== 'DELETE' &&
        (body === undefined || !contract().validRequestBody(operation, body))
      )
        continue;
      entry.request = {
        ...(params && Object.keys(params).length > 0 ? { path: params } : {}),
        ...(Object.keys(query).length > 0 ? { query } : {}),
        ...(body !== undefined ? { body } : {}),
      };
    }
    // Operations, and the refusals of each, in name order: the order the answers came in varies from run to run.
    const byName = <T>(record: Record<string, T>) =>
      Object.fromEntries(
        Object.keys(record)
          .sort()
          .map((key) => [key, record[key]!]),
      );
    const sorted = byName(
      Object.fromEntries(
        Object.entries(examples).map(([operation, entry]) => [
          operation,
          entry.refusals ? { ...entry, refusals: byName(entry.refusals) } : entry,
        ]),
      ),
    );
    writeFileSync(file, `${JSON.stringify(sorted, null, 2)}\n`);
  }

  /** Throws one error listing every response that does not conform. */
  async assertConform(): Promise<void> {
    const failing = (await this.verdicts()).filter((v) => v.problems.length > 0);
    if (failing.length === 0) return;
    const lines = failing.map(
      (v) => `- ${v.exchange.method} ${v.exchange.url} → ${v.exchange.status} (${v.operation}): ${v.problems.join('; ')}`,
    );
    throw new Error(`${failing.length} response(s) do not match the OpenAPI document at ${API_BASE}/openapi.json:\n${lines.join('\n')}`);
  }
}

const MAX_EXAMPLE_CHARS = 8_000;

/**
 * The JSON answer of an exchange as an example: made stable, and when it is too long to be read
 * (a whole document, a long list), the leading members of the object that fit, if the document
 * still accepts that; otherwise none.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function exampleOf({ exchange }: Verdict): any {
  const answer = stableAnswers(JSON.parse(exchange.body));
  if (exchange.body.length <= MAX_EXAMPLE_CHARS) return answer;
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) return undefined;
  const fitting: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(answer)) {
    if (JSON.stringify({ ...fitting, [name]: value }).length > MAX_EXAMPLE_CHARS) continue;
    fitting[name] = value;
  }
  const body = JSON.stringify(fitting);
  return contract().check({ ...exchange, body }).problems.length === 0 ? fitting : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
