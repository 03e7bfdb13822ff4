import {
  ADMIN_IDENTITY,
  BUS_IDENTITIES,
  OPERATOR_IDENTITY,
  SERVICES,
  STREAM_FAMILIES,
  streamName,
  streamFamiliesOf,
  streamOfSubject,
  type BusIdentity,
  type Catalog,
} from '@erp/contracts';
import { inboxPrefix } from './bus';
import { EXPORT_WRITERS, exportStoreName, type ExportWriter } from './objects';

/** What one identity may publish and subscribe to, in nats-server's terms. */
export interface NatsPermissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
  /** May answer the requests it received (and nothing else on their reply subjects). */
  allow_responses: boolean;
}

const isAdminSubject = (subject: string) => /^[^.]+\.admin\./.test(subject);

/**
 * The permissions of every bus identity under `prefix`, generated from `BUS_IDENTITIES`: a service
 * subscribes to the subjects it serves and the events it listens to; publishes the subjects it
 * calls, one by one (never an `*.admin.*` one), and its own events; may read the info of the
 * streams it uses (`streamFamiliesOf`) and pull from, and acknowledge on, its own durable
 * consumers, and nothing else of JetStream but the export stores it uses (`exportFilePermissions`):
 * no stream or consumer is created, changed, purged or deleted by a service (a consumer it could
 * create could push a stream to any subject, an admin one included); reads only its own inbox. The operator identity (the
 * migration step) creates the streams, the export stores and the declared durables (each under
 * its name, over its one event, on the stream that carries it), and changes, purges or deletes
 * no stream and no other consumer. The admin identity (the CLI) calls every served subject, admin
 * ones included, and nothing else.
 */
export function natsPermissions(prefix: string): Record<string, NatsPermissions> {
  const subject = (name: string) => `${prefix}.${name}`;
  const streams = STREAM_FAMILIES.map((family) => streamName(prefix, family));
  // The stream a durable reads: the one that carries its event.
  const streamOf = (event: string) => streamOfSubject(prefix, event);
  const consumersOf = (service: (typeof SERVICES)[number]) =>
    Object.entries(BUS_IDENTITIES[service].consumers as Readonly<Record<string, string>>);
  const subjectsOf = (catalogs: readonly Catalog[]) => catalogs.flatMap((c) => Object.keys(c));
  const permissions: Record<string, NatsPermissions> = {};
  for (const service of SERVICES) {
    const identity: BusIdentity = BUS_IDENTITIES[service];
    const admin = identity.calls.filter(isAdminSubject);
    if (admin.length > 0) throw new Error(`${service} declares calls to back-office subjects: ${admin.join(', ')}`);
    permissions[service] = {
      publish: {
        allow: unique([
          ...identity.calls.map(subject),
          ...identity.publishes.flatMap((events) => Object.keys(events)).map(subject),
          '$JS.API.INFO',
          ...streamFamiliesOf(identity).map((family) => `$JS.API.STREAM.INFO.${streamName(prefix, family)}`),
          ...consumersOf(service).flatMap(([durable, event]) => [
            `$JS.API.CONSUMER.INFO.${streamOf(event)}.${durable}`,
            `$JS.API.CONSUMER.MSG.NEXT.${streamOf(event)}.${durable}`,
            `$JS.ACK.${streamOf(event)}.${durable}.>`,
          ]),
          ...exportFilePermissions(prefix, identity.exportFiles ?? {}),
        ]),
      },
      subscribe: {
        allow: unique([...subjectsOf(identity.serves).map(subject), ...identity.listens.map(subject), `${inboxPrefix(service)}.>`]),
      },
      allow_responses: true,
    };
  }
  const durables = SERVICES.flatMap(consumersOf);
  permissions[OPERATOR_IDENTITY] = {
    publish: {
      allow: unique([
        '$JS.API.INFO',
        // Create only: an update can drop what a stream holds (max_msgs: 1), and a create of a
        // stream that exists with another configuration is refused by the server.
        ...[...streams, ...EXPORT_WRITERS.map((writer) => `OBJ_${exportStoreName(prefix, writer)}`)].flatMap((name) =>
          ['INFO', 'CREATE'].map((op) => `$JS.API.STREAM.${op}.${name}`),
        ),
        ...durables.flatMap(([durable, event]) => [
          `$JS.API.CONSUMER.INFO.${streamOf(event)}.${durable}`,
          // The filter subject is part of the API subject: each durable can only ever read its event.
          `$JS.API.CONSUMER.CREATE.${streamOf(event)}.${durable}.${subject(event)}`,
        ]),
      ]),
    },
    subscribe: { allow: [`${inboxPrefix(OPERATOR_IDENTITY)}.>`] },
    allow_responses: false,
  };
  permissions[ADMIN_IDENTITY] = {
    publish: { allow: unique(SERVICES.flatMap((service) => subjectsOf(BUS_IDENTITIES[service].serves)).map(subject)) },
    subscribe: { allow: [`${inboxPrefix(ADMIN_IDENTITY)}.>`] },
    allow_responses: false,
  };
  return permissions;
}

/**
 * The JetStream API of the export stores each use needs. Reading a file is a direct get of its
 * metadata and of each chunk (a message get of the stream leader where direct get is off), never a
 * consumer. Writing publishes chunks and metadata to the writer's own store, and reads its files'
 * metadata; a file is removed by publishing (a subject rollup over its metadata and over its
 * chunks), never by a purge, which nats-server cannot restrict to one file (its filter is in the
 * request's body: a writer that may purge may empty the whole store). Only the operator creates the stores.
 */
function exportFilePermissions(prefix: string, access: NonNullable<BusIdentity['exportFiles']>): string[] {
  const streamOf = (writer: ExportWriter) => `OBJ_${exportStoreName(prefix, writer)}`;
  const read = (writer: ExportWriter) => [
    `$JS.API.STREAM.INFO.${streamOf(writer)}`,
    `$JS.API.STREAM.MSG.GET.${streamOf(writer)}`,
    `$JS.API.DIRECT.GET.${streamOf(writer)}`,
    `$JS.API.DIRECT.GET.${streamOf(writer)}.>`,
  ];
  const write = (writer: ExportWriter) => [
    ...read(writer),
    `$O.${exportStoreName(prefix, writer)}.C.>`,
    `$O.${exportStoreName(prefix, writer)}.M.>`,
  ];
  return [
    ...(access.write ? write(access.write) : []),
    ...(access.read ?? []).flatMap(read),
    ...(access.info ?? []).map((writer) => `$JS.API.STREAM.INFO.${streamOf(writer)}`),
  ];
}

function unique(values: string[]): string[] {
  return [...new Set(values)].sort();
}

/** A password in the generated config: a literal (tests), or a variable nats-server reads from its environment. */
export type PasswordSource = { literal: string } | { env: string };

/** The environment variable that holds an identity's password for nats-server (`NATS_PASSWORD_WEBHOOK_INGEST`). */
export function passwordVariable(identity: string): string {
  return `NATS_PASSWORD_${identity.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/**
 * The `authorization` block of a nats-server configuration with one user per identity. Written in
 * the server's own syntax (JSON strings, `$VAR` references) so passwords can stay in a Secret.
 */
export function natsAuthorizationConfig(prefix: string, password: (identity: string) => PasswordSource): string {
  const users = Object.entries(natsPermissions(prefix)).map(([identity, permissions]) => {
    const source = password(identity);
    const secret = 'literal' in source ? JSON.stringify(source.literal) : `$${source.env}`;
    const list = (values: string[]) => values.map((v) => `        ${JSON.stringify(v)}`).join(',\n');
    return [
      '    {',
      `      user: ${JSON.stringify(identity)}`,
      `      password: ${secret}`,
      '      permissions: {',
      `        publish: { allow: [\n${list(permissions.publish.allow)}\n        ] }`,
      `        subscribe: { allow: [\n${list(permissions.subscribe.allow)}\n        ] }`,
      ...(permissions.allow_responses ? ['        allow_responses: true'] : []),
      '      }',
      '    }',
    ].join('\n');
  });
  return `authorization {\n  users: [\n${users.join('\n')}\n  ]\n}\n`;
}
