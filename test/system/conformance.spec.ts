import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { JSONSchemaFaker } from 'json-schema-faker';
import { mulberry32 } from '@erp/testing';
import { Contract, type Exchange } from '../support/contract';
import { SALES_KEY_A, salesFixture } from '../support/sales-fixture';
import { Stack } from '../support/stack';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** Generated valid requests per operation, besides the document's own example. */
const GENERATED_PER_OPERATION = Number(process.env.CONFORMANCE_CASES ?? 6);
const SEED = Number(process.env.CONFORMANCE_SEED ?? 20_261_125);

/** The refusals of the gateway's own validation: a valid request gets one only for a rule the document states in words. */
const VALIDATION_MESSAGES = ['Parámetros inválidos', 'Datos inválidos'];

interface Case {
  kind: 'positive' | 'negative';
  /** What the case is, for the failure message: `example`, `generated 3`, `body.detalles.0.cantidad: maximum`. */
  label: string;
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  /** Request headers the document declares (`Idempotency-Key`). */
  headers?: Record<string, string>;
  body?: unknown;
}

interface Operation {
  doc: string;
  document: Json;
  server: string;
  template: string;
  method: string;
  op: Json;
  /** ajv id of the operation's node: `openapi#/paths/~1sales/post`. */
  at: string;
}

/**
 * Conformance to the OpenAPI documents the gateway serves, driven by them alone: for every
 * operation, its example and requests generated from its schemas (json-schema-faker, kept only
 * when ajv finds them valid) must be answered 2xx or refused for a reason the document states;
 * requests that break one rule of the document at a time must be refused with 4xx; every answer
 * must match the document, and none may be a 5xx. The API key is the one thing not in the documents.
 */
describe('conformance to the served OpenAPI documents', () => {
  let stack: Stack;
  let contract: Contract;
  let operations: Operation[];
  const ajv = addFormats(new Ajv2020({ strict: false, multipleOfPrecision: 8 }));
  const random = mulberry32(SEED);

  beforeAll(async () => {
    stack = await Stack.start();
    await stack.seed(salesFixture());
    const main: Json = await (await stack.api('/api/external/v1/openapi.json')).json();
    const webhooksUrl = main.paths['/openapi-webhooks.json'] ? `${main.servers[0].url}/openapi-webhooks.json` : undefined;
    const webhooks: Json = webhooksUrl ? await (await stack.api(webhooksUrl)).json() : { paths: {} };
    contract = new Contract(main, webhooks);
    ajv.addSchema(main, 'openapi', undefined, false);
    ajv.addSchema(webhooks, 'webhooks', undefined, false);
    operations = Object.entries<Json>({ openapi: main, webhooks }).flatMap(([doc, document]) =>
      Object.entries<Json>(document.paths).flatMap(([template, item]) =>
        ['get', 'post', 'put', 'delete']
          .filter((method) => item[method])
          .map((method) => ({
            doc,
            document,
            server: document.servers[0].url,
            template,
            method,
            op: item[method],
            at: `${doc}#/paths/${pointer(template)}/${method}`,
          })),
      ),
    );
    JSONSchemaFaker.option({
      random,
      alwaysFakeOptionals: false,
      optionalsProbability: 0.5,
      maxItems: 3,
      maxLength: 40,
      failOnInvalidTypes: false,
      failOnInvalidFormat: false,
    });
  });
  afterAll(() => stack?.stop());

  it('answers every operation as its document says: valid requests accepted, each broken rule refused, no 5xx', async () => {
    const failures: string[] = [];
    let sent = 0;
    for (const operation of operations) {
      const cases = [...positiveCases(operation), ...negativeCases(operation)];
      for (const c of cases) {
        const exchange = await send(operation, c);
        sent++;
        const problem = judge(operation, c, exchange);
        if (problem)
          failures.push(
            `${operation.method.toUpperCase()} ${operation.template} [${c.kind} ${c.label}] ${exchange.method} ${exchange.url.slice(0, 200)} → ${exchange.status}: ${problem}`,
          );
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(operations.length * (GENERATED_PER_OPERATION + 1));
  });

  function judge(operation: Operation, c: Case, exchange: Exchange): string | undefined {
    if (exchange.status >= 500) return `a ${exchange.status}: ${exchange.body.slice(0, 300)}`;
    const problems = contract.check(exchange).problems;
    if (problems.length > 0) return `the answer breaks the document: ${problems.join('; ')}`;
    const body = parse(exchange.body);
    // An import answers 200 and reports each refused item in `errors`, a batch of sales each refused sale in its result, as their documents say.
    const refusedSales: Json[] = Array.isArray(body?.data?.resultados) ? body.data.resultados.filter((r: Json) => r.status >= 400) : [];
    const refusedInBody = (Array.isArray(body?.errors) && body.errors.length > 0) || refusedSales.length > 0;
    if (c.kind === 'negative')
      return exchange.status < 400 && !refusedInBody ? 'a request that breaks the document was accepted' : undefined;
    // The schema cannot say every rule (fecha_fin not before fecha_inicio): the operation must say it in words.
    const text = normalize(JSON.stringify(operation.op));
    const unstated = (messages: string[]) => messages.filter((message) => !text.includes(normalize(message)));
    if (refusedSales.length > 0) {
      // A sale refused by its validation must break a stated rule; the others are rules on stored data (an id that does not exist).
      const validation = refusedSales
        .filter((r) => VALIDATION_MESSAGES.includes(r.error))
        .flatMap((r) => Object.values<string[]>(r.details ?? {}).flat());
      return unstated(validation).length > 0
        ? `a valid sale was refused by a rule the document does not state: ${JSON.stringify(refusedSales).slice(0, 300)}`
        : undefined;
    }
    if (refusedInBody) {
      // `campo: mensaje` is the item's validation; other messages are rules on stored data (a branch that does not exist).
      const validation = body.errors.map((e: { message: string }) => /^[\w.]+: (.*)$/.exec(e.message)?.[1]).filter(Boolean);
      return unstated(validation).length > 0
        ? `a valid item was refused by a rule the document does not state: ${JSON.stringify(body.errors).slice(0, 300)}`
        : undefined;
    }
    if (exchange.status < 400) return undefined;
    if (VALIDATION_MESSAGES.includes(body?.error)) {
      const messages = Object.values<string[]>(body.details ?? {}).flat();
      return !body.details || unstated(messages).length > 0
        ? `a valid request was refused by a rule the document does not state: ${JSON.stringify(body.details)}`
        : undefined;
    }
    const open = (operation.op.security ?? operation.document.security ?? []).length === 0;
    // 404 and 409 answer the state of stored data (no such id; five exports already running), not the request.
    const stated = [404, 409, 422].includes(exchange.status) || (exchange.status === 401 && open);
    return stated ? undefined : `a valid request was refused: ${exchange.body.slice(0, 300)}`;
  }

  function positiveCases(operation: Operation): Case[] {
    const { op, at } = operation;
    const params: Json[] = op.parameters ?? [];
    const jsonBody = op.requestBody?.content?.['application/json'];
    const example: Case = { kind: 'positive', label: 'example', path: {}, query: {} };
    // An optional header is left out of valid requests: one key sent with two different requests is rightly refused.
    for (const p of params)
      if (p.example !== undefined && p.in !== 'header') (p.in === 'path' ? example.path : example.query)[p.name] = p.example;
    if (jsonBody) example.body = jsonBody.example;
    const cases = [example];
    for (let i = 1; i <= GENERATED_PER_OPERATION; i++) {
      const c: Case = { kind: 'positive', label: `generated ${i}`, path: {}, query: {} };
      params.forEach((p, index) => {
        if (p.in === 'path')
          c.path[p.name] = random() < 0.5 && p.example !== undefined ? p.example : generate(p.schema, `${at}/parameters/${index}/schema`);
        else if (p.in === 'query' && (p.required || random() < 0.5))
          c.query[p.name] = generate(p.schema, `${at}/parameters/${index}/schema`);
      });
      if (jsonBody) c.body = generate(jsonBody.schema, `${at}/requestBody/content/application~1json/schema`);
      // A generator may fail a rule across parameters (fecha_fin before fecha_inicio): such a case is not positive.
      if (c.body !== undefined || !jsonBody) cases.push(c);
    }
    return cases;
  }

  /** One rule of the document broken at a time, starting from the operation's example; kept only if ajv agrees it is invalid. */
  function negativeCases(operation: Operation): Case[] {
    const { op, at, doc } = operation;
    // A delivery is stored as the platform sent it and processed later: its body has no refusal to check, only its token.
    if (doc === 'webhooks') return [];
    const base = positiveCases(operation)[0]!;
    const cases: Case[] = [];
    (op.parameters ?? []).forEach((p: Json, index: number) => {
      const validate = compile(`${at}/parameters/${index}/schema`);
      for (const [label, value] of breakValue(p.schema)) {
        // A parameter travels as text: judge the value as the text the server reads.
        if (validate(fromText(String(value), p.schema))) continue;
        const c: Case = { ...structuredClone(base), kind: 'negative', label: `${p.in} ${p.name}: ${label}` };
        if (p.in === 'header') c.headers = { [p.name]: String(value) };
        else (p.in === 'path' ? c.path : c.query)[p.name] = value;
        cases.push(c);
      }
      if (p.in === 'query')
        cases.push({
          ...structuredClone(base),
          kind: 'negative',
          label: `query ${p.name}: repeated`,
          query: { ...base.query, [p.name]: [sample(p), sample(p)] },
        });
    });
    const jsonBody = op.requestBody?.content?.['application/json'];
    if (jsonBody && base.body !== undefined) {
      const ref = `${at}/requestBody/content/application~1json/schema`;
      const validate = compile(ref);
      for (const [label, body] of breakObject(base.body, resolveSchema(jsonBody.schema, operation), operation, 'body')) {
        if (!validate(body)) cases.push({ ...structuredClone(base), kind: 'negative', label, body });
      }
    }
    return cases;
  }

  /** Mutations of an object, each breaking one keyword of its schema (recursing into objects and the first item of arrays). */
  function breakObject(value: Json, schema: Json, operation: Operation, where: string): Array<[string, Json]> {
    const out: Array<[string, Json]> = [];
    if (schema?.type !== 'object' || value === null || typeof value !== 'object') return out;
    const edit = (label: string, change: (copy: Json) => void) => {
      const copy = structuredClone(value);
      change(copy);
      out.push([label, copy]);
    };
    for (const name of schema.required ?? []) edit(`${where}.${name}: required`, (copy) => delete copy[name]);
    for (const [name, raw] of Object.entries<Json>(schema.properties ?? {})) {
      const property = resolveSchema(raw, operation);
      for (const [label, broken] of breakValue(property)) edit(`${where}.${name}: ${label}`, (copy) => (copy[name] = broken));
      const current = value[name];
      if (Array.isArray(current) && current.length > 0) {
        const items = resolveSchema(property.items, operation);
        for (const [label, item] of breakObject(current[0], items, operation, `${where}.${name}.0`))
          edit(label, (copy) => (copy[name][0] = item));
        if (property.maxItems !== undefined)
          edit(`${where}.${name}: maxItems`, (copy) => (copy[name] = Array.from({ length: property.maxItems + 1 }, () => current[0])));
        if (property.minItems) edit(`${where}.${name}: minItems`, (copy) => (copy[name] = []));
      } else if (current && typeof current === 'object') {
        out.push(
          ...breakObject(current, property, operation, `${where}.${name}`).map(([label, inner]): [string, Json] => [
            label,
            { ...structuredClone(value), [name]: inner },
          ]),
        );
      }
    }
    // Rules across fields: drop every alternative of an anyOf; meet an if and break its then/else.
    for (const rule of [...(schema.anyOf ? [schema] : []), ...(schema.allOf ?? [])]) {
      if (rule.anyOf) {
        const fields = rule.anyOf.flatMap((alternative: Json) => alternative.required ?? []);
        edit(`${where}: anyOf ${fields.join('|')}`, (copy) => fields.forEach((f: string) => delete copy[f]));
      }
      const condition = Object.entries<Json>(rule.if?.properties ?? {})[0];
      if (!condition) continue;
      const [field, { const: expected }] = condition;
      const other = (resolveSchema(schema.properties?.[field], operation)?.enum ?? []).find((v: unknown) => v !== expected);
      const branch = rule.then ?? rule.else;
      const setTo = rule.then ? expected : other;
      if (setTo === undefined) continue;
      edit(`${where}: if ${field}=${String(setTo)}`, (copy) => {
        copy[field] = setTo;
        for (const required of branch.required ?? []) delete copy[required];
        for (const [name, constraint] of Object.entries<Json>(branch.properties ?? {})) {
          const property = resolveSchema(schema.properties?.[name], operation);
          copy[name] =
            constraint.const !== undefined || constraint.enum
              ? (property?.enum ?? []).find((v: unknown) => v !== constraint.const && !constraint.enum?.includes(v))
              : null;
        }
      });
    }
    return out;
  }

  /** Values that break one keyword of a scalar schema. */
  function breakValue(schema: Json): Array<[string, unknown]> {
    const out: Array<[string, unknown]> = [];
    if (!schema) return out;
    const type = schema.type ?? schema.anyOf?.find((s: Json) => s.type !== 'null')?.type;
    if (type === 'integer' || type === 'number') out.push(['type', 'abc']);
    if (type === 'integer') out.push(['integer', 1.5]);
    if (type === 'string') out.push(['type', 12345]);
    if (type === 'boolean') out.push(['type', 'quizas']);
    if (schema.enum)
      out.push(
        ['enum', `${String(schema.enum[0])}-NO`],
        ['enum case', String(schema.enum[0]).toUpperCase()],
        ['enum case', String(schema.enum[0]).toLowerCase()],
      );
    if (schema.maximum !== undefined) out.push(['maximum', schema.maximum + 1]);
    if (schema.minimum !== undefined) out.push(['minimum', schema.minimum - 1]);
    if (schema.exclusiveMinimum !== undefined) out.push(['exclusiveMinimum', schema.exclusiveMinimum]);
    if (schema.maxLength !== undefined) out.push(['maxLength', 'x'.repeat(schema.maxLength + 1)]);
    if (schema.minLength) out.push(['minLength', '']);
    if (schema.multipleOf !== undefined) out.push(['multipleOf', 1 + schema.multipleOf / 10]);
    if (schema.format === 'date') out.push(['format date', '2026-02-30'], ['pattern', '10/03/2026']);
    return out;
  }

  function resolveSchema(schema: Json, operation: Operation): Json {
    if (!schema?.$ref) return schema;
    const document = operation.doc === 'openapi' ? contract.document : contract.webhooks;
    return String(schema.$ref)
      .slice(2)
      .split('/')
      .reduce((node: Json, part: string) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], document);
  }

  /** A value of `schema` from json-schema-faker that ajv finds valid (numbers written with at most 4 decimals, as a client writes a decimal). */
  function generate(schema: Json, ref: string): unknown {
    const validate = compile(ref);
    const document = ref.startsWith('openapi') ? contract.document : contract.webhooks;
    for (let attempt = 0; attempt < 30; attempt++) {
      const value = roundNumbers(JSONSchemaFaker.generate({ ...schema, components: document.components }));
      if (validate(value)) return value;
    }
    return undefined;
  }

  function sample(p: Json): unknown {
    return p.example ?? generate(p.schema, '') ?? 'x';
  }

  const compiled = new Map<string, ValidateFunction>();
  function compile(ref: string): ValidateFunction {
    let validate = compiled.get(ref);
    if (!validate) compiled.set(ref, (validate = ajv.compile(ref ? { $ref: ref } : {})));
    return validate;
  }

  async function send(operation: Operation, c: Case): Promise<Exchange> {
    const path = operation.template.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(String(c.path[name] ?? 'x')));
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(c.query)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value])
        search.append(name, typeof one === 'object' ? JSON.stringify(one) : String(one));
    }
    const url = `${operation.server}${path}${search.size > 0 ? `?${search}` : ''}`;
    const headers: Record<string, string> = { ...c.headers };
    if (operation.op.security?.length !== 0 && operation.doc === 'openapi') headers.Authorization = `Bearer ${SALES_KEY_A}`;
    const hasBody = operation.op.requestBody !== undefined;
    if (hasBody) headers['Content-Type'] = 'application/json';
    const requestBody = hasBody ? JSON.stringify(c.body ?? {}) : undefined;
    const res = await fetch(`${stack.baseUrl}${url}`, {
      method: operation.method.toUpperCase(),
      headers,
      ...(requestBody !== undefined ? { body: requestBody } : {}),
    });
    const out: Record<string, string> = {};
    res.headers.forEach((value, name) => (out[name] = value));
    return { method: operation.method.toUpperCase(), url, status: res.status, headers: out, body: await res.text() };
  }
});

function pointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Text as the typed value its schema documents (`"2"` → 2, `"true"` → true), or the text itself. */
function fromText(text: string, schema: Json): unknown {
  if ((schema?.type === 'integer' || schema?.type === 'number') && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (schema?.type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/** For comparing a message with the document's words: lower case, without Markdown quotes. */
function normalize(text: string): string {
  return text.toLowerCase().replace(/[`«»\\"]/g, '');
}

function parse(text: string): Json {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function roundNumbers(value: Json): Json {
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toFixed(4));
  if (Array.isArray(value)) return value.map(roundNumbers);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, roundNumbers(v)]));
  return value;
}
