import type { OpenApiDocument } from './openapi';
import recorded from './openapi-examples.json';

/**
 * Examples by operation (`POST /sales`): a request that succeeded (path and query values as sent,
 * the JSON body) and the body of one answer per status. Collected from the system tests' real
 * exchanges (`OPENAPI_EXAMPLES=<this file> jest --runInBand test/system/...`, see the README),
 * never written by hand.
 */
export type OpenApiExamples = Record<
  string,
  { request?: { path?: Record<string, string>; query?: Record<string, string>; body?: unknown }; responses: Record<string, unknown> }
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
        const answer = example.responses[status];
        if (answer === undefined) continue;
        if (response.$ref) {
          const name = String(response.$ref).split('/').pop()!;
          if (!shared.has(name)) shared.set(name, answer);
          op.responses[status] = withJsonExample(doc.components.responses[name], answer);
        } else if (response.content?.['application/json']) {
          response.content['application/json'].example = answer;
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

/** A query or path value as the typed value its schema documents (`"2"` → 2, `"true"` → true). */
function typedParam(raw: string, schema: Json): unknown {
  if (schema?.type === 'integer' || schema?.type === 'number') return Number(raw);
  if (schema?.type === 'boolean') return raw === 'true' || raw === '1';
  return raw;
}
