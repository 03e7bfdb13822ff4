import type { OpenApiDocument } from './openapi';
import recorded from './openapi-examples.json';

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

/** The examples committed beside the generator. */
export const RECORDED_EXAMPLES: OpenApiExamples = recorded;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * The document with the recorded examples: each parameter's value, the request body, and per
 * status the answer's body. A shared error response (`components.responses`) is copied into the
 * operation with its own example, and keeps the first example recorded for it in the component.
 */
export function withExamples(document: OpenApiDocument, examples: OpenApiExamples = RECORDED_EXAMPLES): OpenApiDocument {
  const doc: Json = structuredClone(document);
  const shared = new Map<string, unknown>();
  for (const [template, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      const example = examples[`${method.toUpperCase()} ${template}`];
      if (!op || !example) continue;
      for (const param of op.parameters ?? []) {
        const raw = example.request?.[param.in === 'path' ? 'path' : 'query']?.[param.name];
        if (raw !== undefined) param.example = typedParam(raw, param.schema);
      }
      const body = op.requestBody?.content?.['application/json'];
      if (body && example.request?.body !== undefined) body.example = example.request.body;
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        const answers = answersOf(example, status);
        if (answers.length === 0) continue;
        if (response.$ref) {
          const name = String(response.$ref).split('/').pop()!;
          if (!shared.has(name)) shared.set(name, answers[0]!.body);
          op.responses[status] = withJsonExamples(doc.components.responses[name], answers);
        } else if (response.content?.['application/json']) {
          op.responses[status] = withJsonExamples(response, answers);
        }
      }
    }
  }
  for (const [name, answer] of shared) {
    const response = doc.components.responses[name];
    doc.components.responses[name] = withJsonExample(response, response.content['application/json'].example ?? answer);
  }
  return withoutUnusedComponents(doc);
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
