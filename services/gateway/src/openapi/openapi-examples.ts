import type { createDocument } from 'zod-openapi';
import recorded from './openapi-examples.json';

/** An OpenAPI document as zod-openapi builds it (the examples are added to one). */
export type OpenApiDocument = ReturnType<typeof createDocument>;

/**
 * Examples by operation (`POST /sales`): a request that succeeded (path and query values as sent,
 * the JSON body), the body of one answer per status, and of one refusal per `reason` (a status
 * has several: 422 is `campo_desconocido`, `stock_insuficiente`, …). Collected from the system
 * tests' real exchanges (`OPENAPI_EXAMPLES=<this file> jest --runInBand test/system/...`, see the
 * README), never written by hand.
 */
export type OpenApiExamples = Record<
  string,
  {
    request?: { path?: Record<string, string>; query?: Record<string, string>; body?: unknown };
    responses: Record<string, unknown>;
    refusals?: Record<string, unknown>;
  }
>;

/**
 * The entry of the answers no operation gives: to an unknown route, a method the path does not
 * have, a request the HTTP parser refused. Their refusals are the examples of the `Error` schema.
 */
export const OUTSIDE_OPERATIONS = '*';

/** The examples committed beside the generator. */
export const RECORDED_EXAMPLES: OpenApiExamples = recorded;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EVENT_ID = /^evt_[0-9a-f]{32}$/;
const SECRET = /^whsec_[A-Za-z0-9+/=]+$/;
/** Where the timestamps of a recorded entry start (the fixtures' dates are in March 2026). */
const FIRST_TIMESTAMP = Date.parse('2026-03-10T15:00:00.000Z');

/**
 * A recorded answer with what changes on every run made stable, so that recording again shows
 * only what the API now answers differently: timestamps become one second apart from
 * `FIRST_TIMESTAMP` in the order they had, and UUIDs, event ids and secrets are numbered in the
 * order they first appear. The same value gets the same replacement wherever it appears in
 * `answers` (one operation's), so an event id and the cursor that names it still agree.
 */
export function stableAnswers<T>(answers: T): T {
  const found = {
    timestamps: new Set<string>(),
    uuids: new Map<string, string>(),
    events: new Map<string, string>(),
    secrets: new Map<string, string>(),
  };
  const visit = (value: unknown, leaf: (text: string) => string): unknown => {
    if (typeof value === 'string') return leaf(value);
    if (Array.isArray(value)) return value.map((item) => visit(item, leaf));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, visit(v, leaf)]));
    return value;
  };
  const numbered = (seen: Map<string, string>, text: string, make: (n: number) => string) => {
    if (!seen.has(text)) seen.set(text, make(seen.size + 1));
    return seen.get(text)!;
  };
  visit(answers, (text) => {
    if (TIMESTAMP.test(text)) found.timestamps.add(text);
    return text;
  });
  const order = [...found.timestamps].sort((a, b) => Date.parse(a) - Date.parse(b) || a.localeCompare(b));
  const timestamps = new Map(order.map((t, i) => [t, new Date(FIRST_TIMESTAMP + i * 1000).toISOString()]));
  return visit(answers, (text) => {
    if (TIMESTAMP.test(text)) return timestamps.get(text)!;
    if (UUID.test(text)) return numbered(found.uuids, text, (n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`);
    if (EVENT_ID.test(text)) return numbered(found.events, text, (n) => `evt_${String(n).padStart(32, '0')}`);
    if (SECRET.test(text))
      return numbered(found.secrets, text, (n) => `whsec_${Buffer.from(`secreto-de-ejemplo-${n}`).toString('base64')}`);
    return text;
  }) as T;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * The document with the recorded examples: each parameter's value, the request body, and per
 * status the answer's body. A shared error response (`components.responses`) is copied into the
 * operation with its own example. A refusal's status the operation never answered in a recorded
 * run shows the first answer of that status recorded anywhere (every refusal has the same
 * envelope); a shared response keeps the first answer recorded for it. The answers outside every
 * operation are the examples of the `Error` schema.
 */
export function withExamples(document: OpenApiDocument, examples: OpenApiExamples = RECORDED_EXAMPLES): OpenApiDocument {
  const doc: Json = structuredClone(document);
  const firstOfStatus = firstRefusals(examples);
  /** Shared responses by name: the status they answer and the first answer recorded for them. */
  const shared = new Map<string, { status: string; answer?: unknown }>();
  for (const [template, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const example = examples[`${method.toUpperCase()} ${template}`] ?? { responses: {} };
      for (const param of op.parameters ?? []) {
        const raw = example.request?.[param.in === 'path' ? 'path' : 'query']?.[param.name];
        if (raw !== undefined) param.example = typedParam(raw, param.schema);
      }
      const body = op.requestBody?.content?.['application/json'];
      if (body && example.request?.body !== undefined) body.example = example.request.body;
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        const answers = answersOf(example, status);
        if (response.$ref) {
          const name = String(response.$ref).split('/').pop()!;
          const entry = shared.get(name) ?? { status };
          entry.answer ??= answers[0]?.body;
          shared.set(name, entry);
          if (answers.length > 0) op.responses[status] = withJsonExamples(doc.components.responses[name], answers);
        } else if (response.content?.['application/json']) {
          const first = firstOfStatus.get(status);
          if (answers.length === 0 && first) answers.push(first);
          if (answers.length > 0) op.responses[status] = withJsonExamples(response, answers);
        }
      }
    }
  }
  for (const [name, { status, answer }] of shared) {
    const example = answer ?? firstOfStatus.get(status)?.body;
    if (example !== undefined) doc.components.responses[name] = withJsonExample(doc.components.responses[name], example);
  }
  const outside = Object.values(examples[OUTSIDE_OPERATIONS]?.refusals ?? {});
  if (outside.length > 0 && doc.components?.schemas?.Error) doc.components.schemas.Error.examples = outside;
  return withoutUnusedComponents(doc);
}

/** The first refusal recorded of each status, in the order of the operations (the file's). */
function firstRefusals(examples: OpenApiExamples): Map<string, Answer> {
  const first = new Map<string, Answer>();
  for (const [operation, example] of Object.entries(examples)) {
    if (operation === OUTSIDE_OPERATIONS) continue;
    for (const [status, body] of Object.entries(example.responses)) {
      if (Number(status) >= 400 && !first.has(status)) first.set(status, { name: reasonOf(body) ?? 'respuesta', body });
    }
  }
  return first;
}

/** Drops the shared responses and headers no operation refers to any more (every operation got its own copy). */
function withoutUnusedComponents(doc: Json): Json {
  for (const kind of ['responses', 'headers']) {
    const components = doc.components?.[kind];
    if (!components) continue;
    for (const name of Object.keys(components)) {
      const { [name]: _self, ...rest } = components;
      void _self;
      const text = JSON.stringify({ ...doc, components: { ...doc.components, [kind]: rest } });
      if (!text.includes(`"#/components/${kind}/${name}"`)) delete components[name];
    }
  }
  return doc;
}

function withJsonExample(response: Json, example: unknown): Json {
  const json = response.content['application/json'];
  return { ...response, content: { ...response.content, 'application/json': { ...json, example } } };
}

/** One recorded answer of a status, named by its `reason` when it is a refusal. */
interface Answer {
  name: string;
  body: unknown;
}

/** The answers recorded for `status`: the first one of the status, then one per other reason refused with it. */
function answersOf(example: OpenApiExamples[string], status: string): Answer[] {
  const answers: Answer[] = [];
  const first = example.responses[status];
  if (first !== undefined) answers.push({ name: reasonOf(first) ?? 'respuesta', body: first });
  for (const [reason, body] of Object.entries(example.refusals ?? {})) {
    if ((body as { code?: unknown }).code === Number(status) && !answers.some((a) => a.name === reason))
      answers.push({ name: reason, body });
  }
  return answers;
}

function reasonOf(body: unknown): string | undefined {
  const reason = (body as { reason?: unknown } | null)?.reason;
  return typeof reason === 'string' ? reason : undefined;
}

/** One answer as `example`; several (refusals with different reasons) as `examples` named by reason. */
function withJsonExamples(response: Json, answers: Answer[]): Json {
  if (answers.length === 1) return withJsonExample(response, answers[0]!.body);
  const { example: _example, ...json } = response.content['application/json'];
  void _example;
  const examples = Object.fromEntries(answers.map(({ name, body }) => [name, { summary: name, value: body }]));
  return { ...response, content: { ...response.content, 'application/json': { ...json, examples } } };
}

/** A query or path value as the typed value its schema documents (`"2"` → 2, `"true"` → true). */
function typedParam(raw: string, schema: Json): unknown {
  if (schema?.type === 'integer' || schema?.type === 'number') return Number(raw);
  if (schema?.type === 'boolean') return raw === 'true' || raw === '1';
  return raw;
}
