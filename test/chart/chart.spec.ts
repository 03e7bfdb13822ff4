import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { ICronJob } from 'kubernetes-models/batch/v1/CronJob';
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPod } from 'kubernetes-models/v1/Pod';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import { passwordVariable } from '@erp/bus';
import { ADMIN_IDENTITY, OPERATOR_IDENTITY } from '@erp/contracts';
import { openToolbox, type Toolbox } from './toolbox';
import {
  containersOf,
  effectiveEnv,
  named,
  ofKind,
  parseObjects,
  podTemplates,
  selects,
  selectsPods,
  validateObject,
  type KubeObject,
} from './kube-objects';

const ROOT = path.resolve(__dirname, '..', '..');
const CHART = path.join(ROOT, 'charts', 'erp');
const RELEASE = 'erp';
const NAMESPACE = 'erp-test';
/** The one service that takes traffic from outside the cluster. */
const PUBLIC_SERVICE = 'gateway';

/**
 * Every service of the repository (a folder of services/ with a `src/service.ts`; the admin CLI is
 * an application every image carries, not a service): the chart must run them all.
 */
const SERVICES = fs
  .readdirSync(path.join(ROOT, 'services'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(ROOT, 'services', entry.name, 'src', 'service.ts')))
  .map((entry) => entry.name)
  .sort();

const chartValues = parse(fs.readFileSync(path.join(CHART, 'values.yaml'), 'utf8')) as {
  opsPort: number;
  existingSecrets: Record<'database' | 'migrationDatabase' | 'redis', { name: string; key: string }> & {
    nats: { name: string };
    databasePerService: { enabled: boolean; prefix: string };
  };
  postgres: { maxConnections: number; pooler: { poolSize: number }; serverConnections: number };
  migrations: { order: string[] };
  networkPolicy: { egress: Record<string, { ports: Array<{ port: number }>; to: object[] }> };
};
const chartMeta = parse(fs.readFileSync(path.join(CHART, 'Chart.yaml'), 'utf8')) as { appVersion: string };
const OPS_PORT = chartValues.opsPort;
/** The migration Job that creates and updates the events stream and the durable consumers: the first of the order. */
const STREAMS_MIGRATION = chartValues.migrations.order[0]!;

/** What an SRE might set for a small installation with fixed capacity and a slower drain. */
const FIXED_SIZE = {
  autoscaling: { enabled: false },
  podDisruptionBudget: { enabled: false },
  serviceDefaults: { replicas: 1 },
  image: { registry: 'registry.example.com/acme', tag: '2.0.0' },
  config: { SHUTDOWN_TIMEOUT_MS: 60_000 },
  services: { sales: { env: { SHUTDOWN_TIMEOUT_MS: 90_000 } } },
  ingress: { className: 'nginx', hosts: ['api.example.com'], tls: [{ secretName: 'api-tls', hosts: ['api.example.com'] }] },
};

/**
 * What the chart demands before it renders for production: every image pinned by digest and the
 * runbook URL of the alerts. Every render below starts from it except the development values'.
 */
const DIGEST = `sha256:${'ab12'.repeat(16)}`;
const RUNBOOK_BASE_URL = 'https://github.com/acme/erp/blob/1.7.0/docs/alerts.md';
const REQUIRED = {
  services: Object.fromEntries(SERVICES.map((service) => [service, { digest: DIGEST }])),
  monitoring: { prometheusRule: { runbookBaseUrl: RUNBOOK_BASE_URL } },
};

/** The development values: one shared database Secret, no digests, NATS without TLS, no monitoring objects. */
const DEV_VALUES = 'deploy/values-dev.yaml';
/** The sales schema on a Postgres server of its own (postgres.endpoints.sales). */
const SPLIT_VALUES = 'deploy/values-split.yaml';
/** Postgres as a CloudNativePG cluster: its -rw Service (through the Pooler) and, for exports, its -ro Service. */
const HA_VALUES = 'deploy/values-ha.yaml';

/** What a values case sets: the part of the values this test reads to know where each schema lives. */
interface Overrides {
  postgres?: {
    maxConnections?: number;
    endpoints?: Record<string, { maxConnections: number; egress: { ports: Array<{ port: number }>; to: object[] } }>;
  };
  services?: Record<string, { database?: string } | null>;
  monitoring?: { audit?: { enabled?: boolean } };
  shops?: { drift?: { enabled?: boolean } };
}
const overridesOf = ({ values, valuesFile }: Omit<ValuesCase, 'name'>): Overrides =>
  (values ?? (valuesFile ? parse(fs.readFileSync(path.join(ROOT, valuesFile), 'utf8')) : {})) as Overrides;
/** The postgres.endpoints entry a service's schema lives on, or undefined for the default server. */
const endpointOf = (overrides: Overrides, service: string) => overrides.services?.[service]?.database;

let toolbox: Toolbox;
let requiredFile: string;
beforeAll(() => {
  toolbox = openToolbox();
  requiredFile = toolbox.writeFile('required.json', JSON.stringify(REQUIRED));
});
afterAll(() => toolbox?.dispose());

interface ValuesCase {
  name: string;
  values?: object;
  valuesFile?: string;
  /** Without the REQUIRED values (the development values need none of them). */
  bare?: boolean;
}

/** The REQUIRED values unless bare, a values file, then values over it (either may be absent). */
function valuesArgs({ values, valuesFile, bare }: Omit<ValuesCase, 'name'>): string[] {
  return [
    ...(bare ? [] : ['--values', requiredFile]),
    ...(valuesFile ? ['--values', path.join(ROOT, valuesFile)] : []),
    ...(values ? ['--values', toolbox.writeFile(`values-${Math.random().toString(36).slice(2)}.json`, JSON.stringify(values))] : []),
  ];
}

async function render(options: Omit<ValuesCase, 'name'> = {}): Promise<KubeObject[]> {
  return parseObjects(await toolbox.helm(['template', RELEASE, CHART, '--namespace', NAMESPACE, ...valuesArgs(options)]));
}

const serverDeployment = (objects: KubeObject[], service: string) =>
  named(ofKind<IDeployment>(objects, 'Deployment'), `${RELEASE}-${service}`);
const mainContainer = (deployment: IDeployment): IContainer => deployment.spec!.template.spec!.containers[0]!;
const portNumber = (container: IContainer, port: number | string | undefined) =>
  typeof port === 'string' ? container.ports?.find((p) => p.name === port)?.containerPort : port;

describe.each<ValuesCase>([
  { name: 'default values' },
  { name: 'values for a fixed-size installation', values: FIXED_SIZE },
  { name: 'the development values (deploy/values-dev.yaml)', valuesFile: DEV_VALUES, bare: true },
  { name: 'the sales schema on a server of its own (deploy/values-split.yaml)', valuesFile: SPLIT_VALUES },
  { name: 'Postgres as a CloudNativePG cluster with a read replica (deploy/values-ha.yaml)', valuesFile: HA_VALUES },
])('the chart with $name', (valuesCase) => {
  const overrides = overridesOf(valuesCase);
  let objects: KubeObject[];
  let configMaps: IConfigMap[];
  beforeAll(async () => {
    objects = await render(valuesCase);
    configMaps = ofKind<IConfigMap>(objects, 'ConfigMap');
  });

  it('passes helm lint --strict', async () => {
    const sut = await toolbox.helm(['lint', '--strict', CHART, '--namespace', NAMESPACE, ...valuesArgs(valuesCase)]);
    expect(sut).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('renders only objects that match their Kubernetes schema', () => {
    expect(objects.length).toBeGreaterThan(0);
    for (const object of objects) expect(() => validateObject(object)).not.toThrow();
  });

  it('renders one Deployment, Service, ServiceAccount, NetworkPolicy and migration Job per service of the repository', () => {
    const names = (kind: string) =>
      ofKind(objects, kind)
        .map((o) => o.metadata.name)
        .sort();
    const perService = SERVICES.map((s) => `${RELEASE}-${s}`).sort();
    expect(names('Deployment')).toEqual(perService);
    expect(names('Service')).toEqual(perService);
    expect(names('ServiceAccount')).toEqual(perService);
    // A policy for the migration Jobs of each other database server, the audit's when it runs, the drift check's unless it is off.
    const elsewhere = new Set(SERVICES.flatMap((s) => endpointOf(overrides, s) ?? []));
    const extra = [
      ...[...elsewhere].map((endpoint) => `${RELEASE}-migrations-db-${endpoint}`),
      ...(overrides.monitoring?.audit?.enabled ? [`${RELEASE}-audit`] : []),
      ...(overrides.shops?.drift?.enabled === false ? [] : [`${RELEASE}-shop-drift`]),
    ];
    expect(names('NetworkPolicy')).toEqual(
      [...perService, `${RELEASE}-migrations`, `${RELEASE}-migrations-streams`, `${RELEASE}-tests`, ...extra].sort(),
    );
    expect(names('Job')).toEqual(perService.map((n) => `${n}-migrate`));
    for (const service of SERVICES) {
      const deployment = serverDeployment(objects, service);
      expect(deployment.spec!.template.spec!.serviceAccountName).toBe(`${RELEASE}-${service}`);
      expect(mainContainer(deployment).env).toContainEqual({ name: 'OTEL_SERVICE_NAME', value: service });
    }
  });

  it('runs every container as non-root on a read-only root filesystem, without capabilities or privilege escalation', () => {
    const templates = podTemplates(objects);
    expect(templates.map((t) => t.owner)).toEqual(expect.arrayContaining([...SERVICES.map((s) => `Deployment/${RELEASE}-${s}`)]));
    for (const { owner, spec } of templates) {
      expect({ owner, automount: spec.automountServiceAccountToken }).toEqual({ owner, automount: false });
      expect({ owner, host: [spec.hostNetwork, spec.hostPID, spec.hostIPC].some(Boolean) }).toEqual({ owner, host: false });
      for (const container of containersOf(spec)) {
        const context = container.securityContext ?? {};
        const sut = {
          owner,
          runAsNonRoot: context.runAsNonRoot ?? spec.securityContext?.runAsNonRoot,
          rootUser: (context.runAsUser ?? spec.securityContext?.runAsUser) === 0,
          readOnlyRootFilesystem: context.readOnlyRootFilesystem,
          allowPrivilegeEscalation: context.allowPrivilegeEscalation,
          privileged: context.privileged ?? false,
          dropsAll: context.capabilities?.drop?.includes('ALL') ?? false,
          adds: context.capabilities?.add ?? [],
          seccomp: (context.seccompProfile ?? spec.securityContext?.seccompProfile)?.type,
        };
        expect(sut).toEqual({
          owner,
          runAsNonRoot: true,
          rootUser: false,
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          privileged: false,
          dropsAll: true,
          adds: [],
          seccomp: 'RuntimeDefault',
        });
      }
    }
  });

  it('gives services and migrations a writable /tmp from an emptyDir and nothing else writable', () => {
    for (const { owner, spec } of podTemplates(objects).filter((t) => !t.owner.startsWith('Pod/'))) {
      const all = containersOf(spec).flatMap((c) => c.volumeMounts ?? []);
      // Besides /tmp, only the NATS CA (and client certificate) from its Secret, read-only.
      const mounts = all.filter((m) => !(m.readOnly && m.mountPath === '/etc/erp/nats-tls'));
      expect({ owner, mounts: mounts.map((m) => m.mountPath) }).toEqual({ owner, mounts: ['/tmp'] });
      const volume = spec.volumes?.find((v) => v.name === mounts[0]!.name);
      expect({ owner, emptyDir: Boolean(volume?.emptyDir) }).toEqual({ owner, emptyDir: true });
      for (const tls of all.filter((m) => !mounts.includes(m)))
        expect({ owner, secret: Boolean(spec.volumes?.find((v) => v.name === tls.name)?.secret) }).toEqual({ owner, secret: true });
    }
  });

  it('probes every service on its ops port: startup and liveness on /healthz, readiness on /readyz', () => {
    for (const service of SERVICES) {
      const container = mainContainer(serverDeployment(objects, service));
      const probe = (name: 'startupProbe' | 'livenessProbe' | 'readinessProbe') => {
        const httpGet = container[name]?.httpGet;
        return { service, probe: name, path: httpGet?.path, port: portNumber(container, httpGet?.port) };
      };
      expect(probe('startupProbe')).toEqual({ service, probe: 'startupProbe', path: '/healthz', port: OPS_PORT });
      expect(probe('livenessProbe')).toEqual({ service, probe: 'livenessProbe', path: '/healthz', port: OPS_PORT });
      expect(probe('readinessProbe')).toEqual({ service, probe: 'readinessProbe', path: '/readyz', port: OPS_PORT });
      expect(effectiveEnv(container, configMaps).OPS_PORT).toBe(String(OPS_PORT));
    }
  });

  it('gives every pod longer to stop than its SHUTDOWN_TIMEOUT_MS plus its preStop pause', () => {
    for (const service of SERVICES) {
      const deployment = serverDeployment(objects, service);
      const container = mainContainer(deployment);
      const deadlineMs = Number(effectiveEnv(container, configMaps).SHUTDOWN_TIMEOUT_MS);
      const preStop = container.lifecycle?.preStop?.exec?.command ?? [];
      const pauseSeconds = preStop[0] === 'sleep' ? Number(preStop[1]) : 0;
      const sut = deployment.spec!.template.spec!.terminationGracePeriodSeconds!;
      expect({ service, deadlineMs }).toEqual({ service, deadlineMs: expect.any(Number) });
      expect(deadlineMs).toBeGreaterThan(0);
      expect({ service, sut, enough: sut > deadlineMs / 1000 + pauseSeconds }).toEqual({ service, sut, enough: true });
    }
  });

  it('rolls Deployments out without taking a ready pod away first', () => {
    for (const service of SERVICES) {
      const sut = serverDeployment(objects, service).spec!.strategy;
      expect({ service, type: sut?.type, maxUnavailable: sut?.rollingUpdate?.maxUnavailable }).toEqual({
        service,
        type: 'RollingUpdate',
        maxUnavailable: 0,
      });
    }
  });

  it("migrates each service's schema in a pre-install/pre-upgrade hook Job that does not need the release's ConfigMap", () => {
    for (const service of SERVICES) {
      const sut = named(ofKind<IJob>(objects, 'Job'), `${RELEASE}-${service}-migrate`);
      const hooks = (sut.metadata.annotations?.['helm.sh/hook'] ?? '').split(',');
      const deletePolicy = (sut.metadata.annotations?.['helm.sh/hook-delete-policy'] ?? '').split(',');
      expect({ service, hooks: hooks.sort() }).toEqual({ service, hooks: ['pre-install', 'pre-upgrade'] });
      expect(deletePolicy).toContain('before-hook-creation');
      const pod = sut.spec!.template.spec!;
      const container = pod.containers[0]!;
      expect(pod.restartPolicy).toBe('Never');
      expect(container.args).toEqual(['node', 'dist/migrate.js']);
      expect(container.image).toBe(mainContainer(serverDeployment(objects, service)).image);
      expect(container.envFrom).toBeUndefined();
      const env = effectiveEnv(container, []);
      expect({ service, SUBJECT_PREFIX: env.SUBJECT_PREFIX, LOG_LEVEL: env.LOG_LEVEL }).toEqual({
        service,
        SUBJECT_PREFIX: expect.any(String),
        LOG_LEVEL: expect.any(String),
      });
    }
  });

  it('lets only the gateway take traffic from outside the cluster', () => {
    const policies = ofKind<INetworkPolicy>(objects, 'NetworkPolicy');
    for (const { owner, labels } of podTemplates(objects).filter((t) => !t.owner.startsWith('Pod/'))) {
      const applying = policies.filter((p) => selectsPods(p.spec!.podSelector, labels));
      expect({ owner, policies: applying.length }).toEqual({ owner, policies: expect.any(Number) });
      expect(applying.length).toBeGreaterThan(0);
      for (const policy of applying) expect({ owner, types: policy.spec!.policyTypes }).toEqual({ owner, types: ['Ingress', 'Egress'] });

      const rules = applying.flatMap((p) => p.spec!.ingress ?? []);
      const isGateway = owner === `Deployment/${RELEASE}-${PUBLIC_SERVICE}`;
      const publicRules = rules.filter((r) => (r.ports ?? []).some((p) => p.port !== 'ops' && p.port !== OPS_PORT));
      expect({ owner, publicRules: publicRules.length > 0 }).toEqual({ owner, publicRules: isGateway });
      // Every other opening is the ops port (metrics, helm test), from named peers only.
      for (const rule of rules.filter((r) => !publicRules.includes(r))) {
        expect({ owner, restricted: (rule.from ?? []).length > 0 }).toEqual({ owner, restricted: true });
      }
    }

    const services = ofKind<IService>(objects, 'Service');
    for (const service of services)
      expect({ name: service.metadata.name, type: service.spec!.type }).toEqual({ name: service.metadata.name, type: 'ClusterIP' });
    const withHttp = services.filter((s) => s.spec!.ports!.some((p) => p.name === 'http')).map((s) => s.metadata.name);
    expect(withHttp).toEqual([`${RELEASE}-${PUBLIC_SERVICE}`]);
    for (const ingress of ofKind<IIngress>(objects, 'Ingress')) {
      const backends = (ingress.spec!.rules ?? []).flatMap((r) => r.http?.paths ?? []).map((p) => p.backend.service?.name);
      expect(new Set(backends)).toEqual(new Set([`${RELEASE}-${PUBLIC_SERVICE}`]));
    }
  });

  it("lets pods connect only to DNS, NATS, Postgres, the trace collector and, for the gateway alone, Redis; and subscriptions (partners) and webhook-ingest (the shops' APIs) alone to public https; the audit only to DNS and Postgres, the drift check only to DNS and NATS", () => {
    const egress = chartValues.networkPolicy.egress;
    const portsOf = (...names: string[]) => new Set(names.flatMap((n) => egress[n]!.ports.map((p) => p.port)));
    const policies = ofKind<INetworkPolicy>(objects, 'NetworkPolicy');
    for (const { owner, labels } of podTemplates(objects).filter((t) => !t.owner.startsWith('Pod/'))) {
      const rules = policies.filter((p) => selectsPods(p.spec!.podSelector, labels)).flatMap((p) => p.spec!.egress ?? []);
      for (const rule of rules) expect({ owner, ports: (rule.ports ?? []).length > 0 }).toEqual({ owner, ports: true });
      const sut = new Set(rules.flatMap((r) => (r.ports ?? []).map((p) => p.port)));
      const allowed = owner.startsWith('CronJob/')
        ? owner === `CronJob/${RELEASE}-shop-drift`
          ? portsOf('dns', 'nats')
          : portsOf('dns', 'postgres')
        : owner.startsWith('Job/')
          ? owner === `Job/${RELEASE}-${STREAMS_MIGRATION}-migrate`
            ? portsOf('dns', 'postgres', 'nats')
            : portsOf('dns', 'postgres')
          : owner === `Deployment/${RELEASE}-${PUBLIC_SERVICE}`
            ? portsOf('dns', 'nats', 'postgres', 'otel', 'redis')
            : owner === `Deployment/${RELEASE}-subscriptions` || owner === `Deployment/${RELEASE}-webhook-ingest`
              ? portsOf('dns', 'nats', 'postgres', 'otel', 'partners')
              : portsOf('dns', 'nats', 'postgres', 'otel');
      expect({ owner, ports: [...sut].sort() }).toEqual({ owner, ports: [...allowed].sort() });
      const blocks = rules.flatMap((r) => r.to ?? []).flatMap((t) => (t.ipBlock ? [t.ipBlock] : []));
      for (const block of blocks)
        expect(block.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16']));
    }
  });

  it('keeps the database connections of the services at their maximum replicas within the maxConnections of the server their schemas live on', () => {
    const hpas = ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler');
    const sut: Record<string, number> = {};
    for (const service of SERVICES) {
      const deployment = serverDeployment(objects, service);
      const hpa = hpas.find((h) => h.spec!.scaleTargetRef.name === deployment.metadata.name);
      const pods = hpa ? hpa.spec!.maxReplicas : deployment.spec!.replicas!;
      const pool = Number(effectiveEnv(mainContainer(deployment), configMaps).DB_POOL_MAX);
      expect({ service, pool: Number.isInteger(pool) && pool > 0 }).toEqual({ service, pool: true });
      const endpoint = endpointOf(overrides, service) ?? 'default';
      sut[endpoint] = (sut[endpoint] ?? 0) + pods * pool;
    }
    for (const [endpoint, connections] of Object.entries(sut)) {
      const limit =
        endpoint === 'default'
          ? (overrides.postgres?.maxConnections ?? chartValues.postgres.maxConnections)
          : overrides.postgres!.endpoints![endpoint]!.maxConnections;
      expect({ endpoint, connections, within: connections <= limit }).toEqual({ endpoint, connections, within: true });
    }
  });

  it('reads DATABASE_URL and REDIS_URL from existing Secrets, creates no Secret and carries no credentials', () => {
    expect(ofKind(objects, 'Secret')).toEqual([]);
    const { database, redis, databasePerService } = chartValues.existingSecrets;
    // A Secret per service (its own Postgres roles) unless the values ask for the shared one, as the development values do.
    const perService = valuesCase.valuesFile !== DEV_VALUES;
    // The audit (its own Secrets) is checked with the split database below.
    for (const { owner, spec } of podTemplates(objects).filter((t) => !t.owner.startsWith('Pod/') && !t.owner.startsWith('CronJob/'))) {
      const env = spec.containers[0]!.env ?? [];
      const secretRef = (name: string) => env.find((e) => e.name === name)?.valueFrom?.secretKeyRef;
      const service = owner.replace(/^(Deployment|Job)\/erp-/, '').replace(/-migrate$/, '');
      // Migrations go straight to Postgres as the schema's owner; the services through the pooler as their runtime role.
      const job = owner.startsWith('Job/');
      const expected = perService
        ? { name: `${databasePerService.prefix}-${service}`, key: job ? 'MIGRATION_DATABASE_URL' : 'DATABASE_URL' }
        : job
          ? chartValues.existingSecrets.migrationDatabase
          : database;
      expect({ owner, ref: secretRef('DATABASE_URL') }).toEqual({ owner, ref: { name: expected.name, key: expected.key } });
      // Each service is its own bus identity, its password from its own key.
      const natsUser = env.find((e) => e.name === 'NATS_USER')?.value;
      // The first migration Job manages JetStream as the operator identity; the others never reach NATS.
      const identity = owner.startsWith('Job/') ? (service === STREAMS_MIGRATION ? OPERATOR_IDENTITY : undefined) : service;
      expect({ owner, natsUser, ref: secretRef('NATS_PASSWORD') }).toEqual({
        owner,
        natsUser: identity,
        ref: identity && { name: chartValues.existingSecrets.nats.name, key: passwordVariable(identity) },
      });
      if (owner.startsWith('Job/'))
        expect({ owner, streams: env.find((e) => e.name === 'MIGRATE_STREAMS')?.value }).toEqual({
          owner,
          streams: String(service === STREAMS_MIGRATION),
        });
      const wantsRedis = owner === `Deployment/${RELEASE}-${PUBLIC_SERVICE}`;
      expect({ owner, ref: secretRef('REDIS_URL') }).toEqual({ owner, ref: wantsRedis ? { name: redis.name, key: redis.key } : undefined });
      // The keys sealing the shops' credentials: webhook-ingest's alone, optional (no shops, no Secret needed).
      expect({ owner, ref: secretRef('PLATFORM_CREDENTIALS_KEYS') }).toEqual({
        owner,
        ref:
          owner === `Deployment/${RELEASE}-webhook-ingest`
            ? { name: 'erp-shop-credentials', key: 'PLATFORM_CREDENTIALS_KEYS', optional: true }
            : undefined,
      });
    }
    const plainValues = [
      ...configMaps.flatMap((c) => Object.values(c.data ?? {})),
      ...podTemplates(objects).flatMap(({ spec }) => containersOf(spec).flatMap((c) => (c.env ?? []).map((e) => e.value ?? ''))),
    ];
    expect(plainValues.filter((v) => /:\/\/[^/\s]*@/.test(v))).toEqual([]);
  });
});

describe('the chart with default values', () => {
  let objects: KubeObject[];
  let configMaps: IConfigMap[];
  beforeAll(async () => {
    objects = await render();
    configMaps = ofKind<IConfigMap>(objects, 'ConfigMap');
  });

  it('autoscales every service with an HPA and leaves the replica count to it', () => {
    for (const service of SERVICES) {
      const deployment = serverDeployment(objects, service);
      const sut = named(ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler'), deployment.metadata.name);
      expect(sut.spec!.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
      expect(sut.spec!.minReplicas).toBeGreaterThanOrEqual(2);
      expect(sut.spec!.maxReplicas).toBeGreaterThanOrEqual(sut.spec!.minReplicas!);
      expect(deployment.spec!.replicas).toBeUndefined();
    }
  });

  it('is what the runbook’s kubectl selectors pick: every server Deployment of the release, nothing else', () => {
    const operations = fs.readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8');
    const block = /<!-- runbook: scale-down -->\n```sh\n([\s\S]*?)```/.exec(operations)![1]!;
    const selectors = [...block.matchAll(/ -l (\S+)/g)].map((m) => m[1]!);
    expect(selectors.length).toBe(2);
    const deployments = ofKind<IDeployment>(objects, 'Deployment');
    for (const selector of selectors) {
      const labels = Object.fromEntries(selector.split(',').map((pair) => pair.split('=') as [string, string]));
      const sut = deployments.filter((d) => selects(labels, d.metadata.labels ?? {})).map((d) => d.metadata.name);
      expect(sut.sort()).toEqual(SERVICES.map((service) => `${RELEASE}-${service}`).sort());
    }
  });

  it('keeps all but one pod of a service through voluntary disruptions', () => {
    for (const service of SERVICES) {
      const deployment = serverDeployment(objects, service);
      const sut = named(ofKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget'), deployment.metadata.name);
      expect(sut.spec!.maxUnavailable).toBe(1);
      expect(sut.spec!.selector!.matchLabels).toEqual(deployment.spec!.selector.matchLabels);
    }
  });

  it('routes the API and the webhook paths to the gateway through the Ingress', () => {
    const sut = named(ofKind<IIngress>(objects, 'Ingress'), RELEASE);
    const paths = sut.spec!.rules!.flatMap((r) => r.http!.paths);
    expect(paths.map((p) => [p.path, p.pathType, p.backend.service]).sort()).toEqual([
      ['/api/external/v1', 'Prefix', { name: `${RELEASE}-gateway`, port: { name: 'http' } }],
      ['/api/webhook', 'Prefix', { name: `${RELEASE}-gateway`, port: { name: 'http' } }],
    ]);
    const gateway = mainContainer(serverDeployment(objects, 'gateway'));
    const http = gateway.ports!.find((p) => p.name === 'http')!;
    expect(effectiveEnv(gateway, ofKind<IConfigMap>(objects, 'ConfigMap')).PORT).toBe(String(http.containerPort));
  });

  it('pins the third-party image it names by digest', () => {
    const sut = podTemplates(objects).filter((t) => t.owner.startsWith('Pod/'));
    expect(sut.length).toBeGreaterThan(0);
    for (const { owner, spec } of sut)
      for (const container of containersOf(spec))
        expect({ owner, image: container.image }).toEqual({ owner, image: expect.stringMatching(/@sha256:[a-f0-9]{64}$/) });
  });

  it('serves the Ingress over TLS, with the certificate of an existing Secret', () => {
    expect(named(ofKind<IIngress>(objects, 'Ingress'), RELEASE).spec!.tls).toEqual([{ secretName: 'erp-tls' }]);
  });

  it("has a helm test that curls the gateway's /readyz through its Service", () => {
    const sut = ofKind<IPod>(objects, 'Pod').filter((p) => p.metadata.annotations?.['helm.sh/hook'] === 'test');
    expect(sut).toHaveLength(1);
    const container = sut[0]!.spec!.containers[0]!;
    expect([...(container.command ?? []), ...(container.args ?? [])]).toEqual(
      expect.arrayContaining(['curl', '--fail', `http://${RELEASE}-gateway:${OPS_PORT}/readyz`]),
    );
    const gatewayService = named(ofKind<IService>(objects, 'Service'), `${RELEASE}-gateway`);
    expect(gatewayService.spec!.ports).toContainEqual(expect.objectContaining({ name: 'ops', port: OPS_PORT }));
  });

  it('confines the helm test pod: no connection in, out only to DNS and the gateway pods’ ops port', () => {
    const pod = ofKind<IPod>(objects, 'Pod').find((p) => p.metadata.annotations?.['helm.sh/hook'] === 'test')!;
    const sut = ofKind<INetworkPolicy>(objects, 'NetworkPolicy').filter((p) =>
      selects(p.spec!.podSelector.matchLabels, pod.metadata.labels ?? {}),
    );
    expect(sut).toHaveLength(1);
    expect(sut[0]!.spec!.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(sut[0]!.spec!.ingress).toEqual([]);
    const egress = sut[0]!.spec!.egress!;
    const dnsPorts = chartValues.networkPolicy.egress.dns!.ports.map((p) => p.port);
    const gatewayLabels = serverDeployment(objects, 'gateway').spec!.template.metadata!.labels!;
    const opsRules = egress.filter((r) => !(r.ports ?? []).every((p) => dnsPorts.includes(p.port as number)));
    expect(opsRules).toHaveLength(1);
    expect(opsRules[0]!.ports).toEqual([{ port: OPS_PORT, protocol: 'TCP' }]);
    expect(opsRules[0]!.to!.map((peer) => selects(peer.podSelector?.matchLabels, gatewayLabels))).toEqual([true]);
  });

  it('names each image <repository>-<service>:<appVersion>@<digest>', () => {
    for (const service of SERVICES) {
      expect(mainContainer(serverDeployment(objects, service)).image).toBe(`erp-${service}:${chartMeta.appVersion}@${DIGEST}`);
    }
  });

  it('connects every service, the migration Job that manages JetStream and the drift check to NATS over TLS with the CA of erp-nats-tls', () => {
    const withTls = podTemplates(objects).filter(({ spec }) => (spec.volumes ?? []).some((v) => v.secret?.secretName === 'erp-nats-tls'));
    expect(withTls.map((t) => t.owner).sort()).toEqual(
      [
        ...SERVICES.map((s) => `Deployment/${RELEASE}-${s}`),
        `Job/${RELEASE}-${STREAMS_MIGRATION}-migrate`,
        `CronJob/${RELEASE}-shop-drift`,
      ].sort(),
    );
    for (const { owner, spec } of withTls) {
      const env = Object.fromEntries((spec.containers[0]!.env ?? []).map((e) => [e.name, e.value]));
      expect({ owner, ca: env.NATS_TLS_CA_FILE }).toEqual({ owner, ca: '/etc/erp/nats-tls/ca.crt' });
    }
  });

  it('renders the ServiceMonitor, the PrometheusRule with every runbook under the given URL, and the dashboards', () => {
    expect(ofKind(objects, 'ServiceMonitor').map((o) => o.metadata.name)).toEqual([RELEASE]);
    const rule = ofKind<
      KubeObject & { spec: { groups: Array<{ rules: Array<{ alert?: string; annotations?: Record<string, string> }> }> } }
    >(objects, 'PrometheusRule');
    expect(rule.map((o) => o.metadata.name)).toEqual([RELEASE]);
    const alerts = rule[0]!.spec.groups.flatMap((g) => g.rules.filter((r) => r.alert));
    expect(alerts.length).toBeGreaterThan(20);
    expect(alerts.filter((a) => !a.annotations?.runbook_url?.startsWith(`${RUNBOOK_BASE_URL}#`)).map((a) => a.alert)).toEqual([]);
    expect(configMaps.filter((c) => c.metadata?.labels?.grafana_dashboard === '1').map((c) => c.metadata!.name)).toEqual([
      `${RELEASE}-dashboards`,
    ]);
  });

  it('pauses the gateway before SIGTERM so load balancers stop sending it requests first', () => {
    const sut = mainContainer(serverDeployment(objects, 'gateway')).lifecycle?.preStop?.exec?.command;
    expect(sut?.[0]).toBe('sleep');
    expect(Number(sut?.[1])).toBeGreaterThan(0);
  });

  it("checks and repairs the shops' drift every night with the admin CLI of an image, as the admin identity over NATS", () => {
    const sut = named(ofKind<ICronJob>(objects, 'CronJob'), `${RELEASE}-shop-drift`);
    expect(sut.spec!.schedule).toBe('30 3 * * *');
    expect(sut.spec!.concurrencyPolicy).toBe('Forbid');
    const job = sut.spec!.jobTemplate.spec!;
    expect(job.activeDeadlineSeconds).toBeGreaterThan(0);
    const pod = job.template.spec!;
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.serviceAccountName).toBeUndefined();
    const container = pod.containers[0]!;
    expect(container.image).toBe(`erp-gateway:${chartMeta.appVersion}@${DIGEST}`);
    expect([...container.command!, ...(container.args ?? [])]).toEqual(['node', '/app/services/admin/dist/cli.js', 'drift', '--repair']);
    // NATS' address from the release's config, the admin identity's password alone, the CA the services get.
    expect(container.envFrom).toEqual([{ configMapRef: { name: `${RELEASE}-config` } }]);
    const env = effectiveEnv(container, configMaps);
    const config = named(ofKind<IConfigMap>(objects, 'ConfigMap'), `${RELEASE}-config`).data!;
    expect({ NATS_URL: env.NATS_URL, SUBJECT_PREFIX: env.SUBJECT_PREFIX }).toEqual({
      NATS_URL: config.NATS_URL,
      SUBJECT_PREFIX: config.SUBJECT_PREFIX,
    });
    expect(container.env).toEqual([
      { name: 'NATS_USER', value: ADMIN_IDENTITY },
      {
        name: 'NATS_PASSWORD',
        valueFrom: { secretKeyRef: { name: chartValues.existingSecrets.nats.name, key: passwordVariable(ADMIN_IDENTITY) } },
      },
      { name: 'NATS_TLS_CA_FILE', value: '/etc/erp/nats-tls/ca.crt' },
      { name: 'LOG_LEVEL', value: 'warn' },
    ]);
    const gateway = serverDeployment(objects, 'gateway').spec!.template.spec!;
    expect(pod.volumes).toContainEqual(gateway.volumes!.find((v) => v.name === 'nats-tls'));
    expect(container.volumeMounts).toContainEqual(
      mainContainer(serverDeployment(objects, 'gateway')).volumeMounts!.find((m) => m.name === 'nats-tls'),
    );
    expect(pod.securityContext).toEqual(gateway.securityContext);
    expect(container.securityContext).toEqual(gateway.containers[0]!.securityContext);
  });

  it('confines the drift check: no connection in, out only to DNS and NATS, by the labels of its pods', () => {
    const labels = named(ofKind<ICronJob>(objects, 'CronJob'), `${RELEASE}-shop-drift`).spec!.jobTemplate.spec!.template.metadata!.labels!;
    const sut = ofKind<INetworkPolicy>(objects, 'NetworkPolicy').filter((p) => selectsPods(p.spec!.podSelector, labels));
    expect(sut.map((p) => p.metadata.name)).toEqual([`${RELEASE}-shop-drift`]);
    expect(sut[0]!.spec!.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(sut[0]!.spec!.ingress).toEqual([]);
    const { dns, nats } = chartValues.networkPolicy.egress;
    expect(sut[0]!.spec!.egress).toEqual([
      { ports: dns!.ports, to: dns!.to },
      { ports: nats!.ports, to: nats!.to },
    ]);
  });
});

describe('the chart with the drift check of the shops', () => {
  const driftOf = (objects: KubeObject[]) => objects.filter((o) => o.metadata.name === `${RELEASE}-shop-drift`);
  const alertsOf = (objects: KubeObject[]) =>
    ofKind<KubeObject & { spec: { groups: Array<{ rules: Array<{ alert?: string }> }> } }>(objects, 'PrometheusRule').flatMap((r) =>
      r.spec.groups.flatMap((g) => g.rules.flatMap((rule) => rule.alert ?? [])),
    );

  it('alerts when its Job fails', async () => {
    expect(alertsOf(await render())).toContain('ErpShopDriftJobFailed');
  });

  it('only compares when repair is off, with the extra arguments given', async () => {
    const objects = await render({ values: { shops: { drift: { repair: false, args: ['--dias', '7'] } } } });
    const container = named(ofKind<ICronJob>(objects, 'CronJob'), `${RELEASE}-shop-drift`).spec!.jobTemplate.spec!.template.spec!
      .containers[0]!;
    expect([...container.command!, ...(container.args ?? [])]).toEqual(['node', '/app/services/admin/dist/cli.js', 'drift', '--dias', '7']);
  });

  it('renders no CronJob, NetworkPolicy or alert of it when turned off', async () => {
    const objects = await render({ values: { shops: { drift: { enabled: false } } } });
    expect(driftOf(objects).map((o) => o.kind)).toEqual([]);
    expect(alertsOf(objects)).not.toContain('ErpShopDriftJobFailed');
  });
});

describe('the chart with the development values (deploy/values-dev.yaml)', () => {
  let objects: KubeObject[];
  beforeAll(async () => {
    objects = await render({ valuesFile: DEV_VALUES, bare: true });
  });

  it('pulls the images by tag, as skaffold builds them, and connects to NATS without TLS', () => {
    expect(mainContainer(serverDeployment(objects, 'sales')).image).toBe(`erp-sales:${chartMeta.appVersion}`);
    const tls = podTemplates(objects).filter(({ spec }) => (spec.volumes ?? []).some((v) => v.name === 'nats-tls'));
    expect(tls.map((t) => t.owner)).toEqual([]);
    const env = podTemplates(objects).flatMap(({ spec }) => (spec.containers[0]!.env ?? []).map((e) => e.name));
    expect(env.filter((name) => name.startsWith('NATS_TLS_'))).toEqual([]);
  });

  it('renders no monitoring object: no ServiceMonitor, PrometheusRule or dashboards', () => {
    expect(objects.filter((o) => ['ServiceMonitor', 'PrometheusRule'].includes(o.kind)).map((o) => o.kind)).toEqual([]);
    expect(objects.filter((o) => o.metadata.labels?.grafana_dashboard)).toEqual([]);
  });
});

describe('two successive releases', () => {
  const migrationOrder = (parse(fs.readFileSync(path.join(CHART, 'values.yaml'), 'utf8')) as { migrations: { order: string[] } }).migrations
    .order;
  /** The migration hook Jobs in the order Helm runs them: by weight, then by name. */
  const hookSequence = (objects: KubeObject[]) =>
    ofKind<IJob>(objects, 'Job')
      .filter((job) => (job.metadata.annotations?.['helm.sh/hook'] ?? '').includes('pre-upgrade'))
      .map((job) => ({ job, weight: Number(job.metadata.annotations?.['helm.sh/hook-weight'] ?? '0') }))
      .sort((a, b) => a.weight - b.weight || a.job.metadata.name!.localeCompare(b.job.metadata.name!));

  it('migrate schema by schema in the configured order, with a weight each, at install and at the upgrade after it', async () => {
    const install = await render({ values: { image: { tag: '2.0.0' } } });
    const upgrade = parseObjects(
      await toolbox.helm([
        'template',
        RELEASE,
        CHART,
        '--namespace',
        NAMESPACE,
        '--is-upgrade',
        ...valuesArgs({ values: { image: { tag: '2.1.0' } } }),
      ]),
    );
    const expected = [...migrationOrder.filter((s) => SERVICES.includes(s)), ...SERVICES.filter((s) => !migrationOrder.includes(s))];
    for (const [release, objects, tag] of [
      ['install', install, '2.0.0'],
      ['upgrade', upgrade, '2.1.0'],
    ] as const) {
      const sut = hookSequence(objects);
      expect({ release, order: sut.map((h) => h.job.metadata.name) }).toEqual({
        release,
        order: expected.map((s) => `${RELEASE}-${s}-migrate`),
      });
      expect({ release, distinctWeights: new Set(sut.map((h) => h.weight)).size }).toEqual({ release, distinctWeights: sut.length });
      for (const { job } of sut) {
        const container = job.spec!.template.spec!.containers[0]!;
        // Each release migrates with its own image, before any of its pods start.
        expect(container.image).toMatch(new RegExp(`:${tag.replace(/\./g, '\\.')}@${DIGEST}$`));
        const env = effectiveEnv(container, []);
        expect({ job: job.metadata.name, statement: env.MIGRATION_STATEMENT_TIMEOUT_MS, lock: env.MIGRATION_LOCK_TIMEOUT_MS }).toEqual({
          job: job.metadata.name,
          statement: '0',
          lock: '10000',
        });
      }
    }
  });
});

describe('the chart for a fixed-size installation', () => {
  let objects: KubeObject[];
  beforeAll(async () => {
    objects = await render({ values: FIXED_SIZE });
  });

  it('runs the configured replicas, without HPA or PodDisruptionBudget', () => {
    expect(ofKind(objects, 'HorizontalPodAutoscaler')).toEqual([]);
    expect(ofKind(objects, 'PodDisruptionBudget')).toEqual([]);
    for (const service of SERVICES)
      expect({ service, replicas: serverDeployment(objects, service).spec!.replicas }).toEqual({ service, replicas: 1 });
  });

  it('derives the grace period from a longer deadline, also when one service sets its own', () => {
    const grace = (service: string) => serverDeployment(objects, service).spec!.template.spec!.terminationGracePeriodSeconds!;
    expect(grace('sales')).toBeGreaterThan(90);
    expect(grace('inventory')).toBeGreaterThan(60);
    expect(grace('inventory')).toBeLessThanOrEqual(90);
  });

  it('pulls each image from the configured registry and tag', () => {
    for (const service of SERVICES) {
      expect(mainContainer(serverDeployment(objects, service)).image).toBe(`registry.example.com/acme/erp-${service}:2.0.0@${DIGEST}`);
    }
  });

  it('serves the API on the configured host, class and TLS secret', () => {
    const sut = named(ofKind<IIngress>(objects, 'Ingress'), RELEASE).spec!;
    expect(sut.ingressClassName).toBe('nginx');
    expect(sut.tls).toEqual([{ secretName: 'api-tls', hosts: ['api.example.com'] }]);
    expect(sut.rules!.map((r) => r.host)).toEqual(['api.example.com']);
  });
});

describe('the chart with a Postgres role per service', () => {
  const refOf = (objects: KubeObject[], owner: string) => {
    const template = podTemplates(objects).find((t) => t.owner === owner)!;
    return template.spec.containers[0]!.env!.find((e) => e.name === 'DATABASE_URL')!.valueFrom!.secretKeyRef;
  };

  it('gives a service its own Secrets when it names them, the others their per-service ones', async () => {
    const own = { name: 'vault-webhook-ingest', key: 'RUNTIME_URL' };
    const owner = { name: 'vault-webhook-ingest', key: 'OWNER_URL' };
    const objects = await render({ values: { services: { 'webhook-ingest': { databaseSecret: own, migrationDatabaseSecret: owner } } } });
    expect(refOf(objects, `Deployment/${RELEASE}-webhook-ingest`)).toEqual(own);
    expect(refOf(objects, `Job/${RELEASE}-webhook-ingest-migrate`)).toEqual(owner);
    expect(refOf(objects, `Deployment/${RELEASE}-gateway`)).toEqual({ name: 'erp-database-gateway', key: 'DATABASE_URL' });
    expect(refOf(objects, `Job/${RELEASE}-gateway-migrate`)).toEqual({ name: 'erp-database-gateway', key: 'MIGRATION_DATABASE_URL' });
  });

  it('gives every service the one shared Secret only when asked for', async () => {
    const objects = await render({ values: { existingSecrets: { databasePerService: { enabled: false } } } });
    for (const service of SERVICES) {
      expect(refOf(objects, `Deployment/${RELEASE}-${service}`)).toEqual(chartValues.existingSecrets.database);
      expect(refOf(objects, `Job/${RELEASE}-${service}-migrate`)).toEqual(chartValues.existingSecrets.migrationDatabase);
    }
  });
});

describe('the chart with a schema on a server of its own (deploy/values-split.yaml)', () => {
  const split = overridesOf({ valuesFile: SPLIT_VALUES });
  const salesEndpoint = split.postgres!.endpoints![endpointOf(split, 'sales')!]!;
  const postgresPort = chartValues.networkPolicy.egress.postgres!.ports[0]!.port;
  let objects: KubeObject[];
  beforeAll(async () => {
    objects = await render({ valuesFile: SPLIT_VALUES });
  });

  /** The peers a pod may reach on Postgres' port, by every policy that selects it. */
  const postgresPeers = (owner: string) => {
    const { labels } = podTemplates(objects).find((t) => t.owner === owner)!;
    return ofKind<INetworkPolicy>(objects, 'NetworkPolicy')
      .filter((p) => selectsPods(p.spec!.podSelector, labels))
      .flatMap((p) => p.spec!.egress ?? [])
      .filter((rule) => (rule.ports ?? []).some((port) => port.port === postgresPort))
      .flatMap((rule) => rule.to ?? []);
  };

  it('puts the sales schema on its endpoint and leaves the others on the default server', () => {
    expect(SERVICES.filter((s) => endpointOf(split, s) !== undefined)).toEqual(['sales']);
    expect(salesEndpoint.egress.to).not.toEqual(chartValues.networkPolicy.egress.postgres!.to);
  });

  it('lets each service and its migration Job reach only the database server its schema lives on', () => {
    for (const service of SERVICES) {
      const expected = service === 'sales' ? salesEndpoint.egress.to : chartValues.networkPolicy.egress.postgres!.to;
      for (const owner of [`Deployment/${RELEASE}-${service}`, `Job/${RELEASE}-${service}-migrate`])
        expect({ owner, peers: postgresPeers(owner) }).toEqual({ owner, peers: expected });
    }
  });

  it('lets the audit read every server, the sales schema as DATABASE_URL_SALES with that server’s auditor', () => {
    expect(postgresPeers(`CronJob/${RELEASE}-audit`)).toEqual([
      ...chartValues.networkPolicy.egress.postgres!.to,
      ...salesEndpoint.egress.to,
    ]);
    const { spec } = podTemplates(objects).find((t) => t.owner === `CronJob/${RELEASE}-audit`)!;
    const refs = Object.fromEntries((spec.containers[0]!.env ?? []).map((e) => [e.name, e.valueFrom?.secretKeyRef]));
    expect(refs).toEqual({
      DATABASE_URL: { name: 'erp-auditor', key: 'DATABASE_URL' },
      DATABASE_URL_SALES: { name: 'erp-auditor-sales', key: 'DATABASE_URL' },
    });
  });

  it('counts each service against its own server only: the default server no longer carries the sales pools', async () => {
    // 480 connections at the maximum replicas with every schema on one server; 420 without sales' 60.
    await expect(render({ values: { postgres: { maxConnections: 420 } } })).rejects.toThrow(/could open 480 database connections/);
    await expect(render({ valuesFile: SPLIT_VALUES, values: { postgres: { maxConnections: 420 } } })).resolves.toEqual(expect.any(Array));
  });

  it.each<[string, object, RegExp]>([
    [
      'more connections on the second server than it takes',
      { postgres: { endpoints: { sales: { maxConnections: 100 } } } },
      /the services of postgres.endpoints.sales \(sales\) could open 120 database connections at their maximum replicas .* over postgres.endpoints.sales.maxConnections \(100\)/,
    ],
    [
      'more pooled server connections on the second server than its Postgres takes',
      { postgres: { endpoints: { sales: { pooler: { poolSize: 100 } } } } },
      /the pooler of postgres.endpoints.sales could open 100 server connections \(1 database users × postgres.endpoints.sales.pooler.poolSize 100\), over postgres.endpoints.sales.serverConnections \(90\)/,
    ],
    [
      'a service on an endpoint that is not declared',
      { services: { returns: { database: 'returns' } } },
      /services.returns.database: "returns" is not an entry of postgres.endpoints/,
    ],
    [
      'an audit without the auditor of the second server',
      {
        postgres: { endpoints: { other: { maxConnections: 200, pooler: { enabled: false, poolSize: 1 }, egress: salesEndpoint.egress } } },
        services: { sales: { database: 'other' } },
      },
      /postgres.endpoints.other.auditorSecret is needed by the audit/,
    ],
  ])('refuses %s', async (_case, values, message) => {
    await expect(render({ valuesFile: SPLIT_VALUES, values })).rejects.toThrow(message);
  });
});

describe('the chart with Postgres as a CloudNativePG cluster (deploy/values-ha.yaml)', () => {
  const readEnv = (objects: KubeObject[], service: string) =>
    mainContainer(serverDeployment(objects, service)).env?.find((e) => e.name === 'DATABASE_URL_READ');

  it('gives the owners of exports DATABASE_URL_READ from their database Secret, and no other service or Job', async () => {
    const objects = await render({ valuesFile: HA_VALUES });
    for (const service of SERVICES) {
      const env = readEnv(objects, service);
      if (['sales', 'returns', 'inventory'].includes(service))
        expect({ service, env }).toEqual({
          service,
          env: { name: 'DATABASE_URL_READ', valueFrom: { secretKeyRef: { name: `erp-database-${service}`, key: 'DATABASE_URL_READ' } } },
        });
      else expect({ service, env }).toEqual({ service, env: undefined });
    }
    const jobs = ofKind<IJob>(objects, 'Job');
    expect(jobs.length).toBeGreaterThan(0);
    for (const job of jobs)
      expect(job.spec!.template.spec!.containers.flatMap((c) => c.env ?? []).map((e) => e.name)).not.toContain('DATABASE_URL_READ');
  });

  it("takes a service's own readDatabaseSecret over its database Secret, and gives nobody a read endpoint by default", async () => {
    const own = await render({
      valuesFile: HA_VALUES,
      values: { services: { sales: { readDatabaseSecret: { name: 'erp-pg-ro-sales', key: 'uri' } } } },
    });
    expect(readEnv(own, 'sales')?.valueFrom).toEqual({ secretKeyRef: { name: 'erp-pg-ro-sales', key: 'uri' } });
    const defaults = await render();
    for (const service of SERVICES) expect({ service, env: readEnv(defaults, service) }).toEqual({ service, env: undefined });
  });

  it('lets the services reach every instance of the cluster and its Pooler, whichever is the primary', async () => {
    const objects = await render({ valuesFile: HA_VALUES });
    const rules = ofKind<INetworkPolicy>(objects, 'NetworkPolicy').flatMap((p) => p.spec!.egress ?? []);
    const peers = rules.filter((rule) => (rule.ports ?? []).some((port) => port.port === 5432)).flatMap((rule) => rule.to ?? []);
    expect(peers).toEqual(
      expect.arrayContaining([
        { podSelector: { matchLabels: { 'cnpg.io/cluster': 'erp-pg' } } },
        { podSelector: { matchLabels: { 'cnpg.io/poolerName': 'erp-pg-pooler-rw' } } },
      ]),
    );
  });
});

describe('the chart for a NATS without credentials', () => {
  it('gives no service NATS_USER or NATS_PASSWORD', async () => {
    const objects = await render({ values: { existingSecrets: { nats: { name: '' } } } });
    const names = podTemplates(objects).flatMap((t) => (t.spec.containers[0]!.env ?? []).map((e) => e.name));
    expect(names.filter((n) => n.startsWith('NATS_USER') || n.startsWith('NATS_PASSWORD'))).toEqual([]);
  });
});

describe('the chart on transport and supply chain', () => {
  it('has cert-manager issue the Ingress certificate for its hosts when given an issuer', async () => {
    const objects = await render({ values: { ingress: { hosts: ['api.example.com'], clusterIssuer: 'letsencrypt' } } });
    const sut = named(ofKind<IIngress>(objects, 'Ingress'), RELEASE);
    expect(sut.metadata.annotations).toEqual({ 'cert-manager.io/cluster-issuer': 'letsencrypt' });
    expect(sut.spec!.tls).toEqual([{ secretName: 'erp-tls', hosts: ['api.example.com'] }]);
  });

  it('serves plain HTTP only when told that TLS ends before the Ingress', async () => {
    const objects = await render({ values: { ingress: { tls: [], allowPlainHttp: true } } });
    expect(named(ofKind<IIngress>(objects, 'Ingress'), RELEASE).spec!.tls).toBeUndefined();
  });

  it('gives every service, and the migration Job that manages JetStream, the NATS CA and client certificate when asked', async () => {
    const objects = await render({
      values: { existingSecrets: { nats: { name: 'erp-nats', tlsSecret: 'erp-nats-tls', clientCertificate: true } } },
    });
    // The admin CLI of the drift check reads the CA alone (as the documented back-office pods).
    const withTls = podTemplates(objects).filter(
      ({ owner, spec }) =>
        owner !== `CronJob/${RELEASE}-shop-drift` && (spec.volumes ?? []).some((v) => v.secret?.secretName === 'erp-nats-tls'),
    );
    expect(withTls.map((t) => t.owner).sort()).toEqual(
      [...SERVICES.map((s) => `Deployment/${RELEASE}-${s}`), `Job/${RELEASE}-${STREAMS_MIGRATION}-migrate`].sort(),
    );
    for (const { owner, spec } of withTls) {
      const container = spec.containers[0]!;
      const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));
      expect({ owner, ca: env.NATS_TLS_CA_FILE, cert: env.NATS_TLS_CERT_FILE, key: env.NATS_TLS_KEY_FILE }).toEqual({
        owner,
        ca: '/etc/erp/nats-tls/ca.crt',
        cert: '/etc/erp/nats-tls/tls.crt',
        key: '/etc/erp/nats-tls/tls.key',
      });
      expect(container.volumeMounts).toContainEqual({ name: 'nats-tls', mountPath: '/etc/erp/nats-tls', readOnly: true });
    }
  });

  it('pins every image by digest when given one: each service’s and the helm test’s', async () => {
    const services = Object.fromEntries(SERVICES.map((service) => [service, { digest: DIGEST }]));
    const objects = await render({ values: { services, tests: { image: `curlimages/curl:8.11.1@${DIGEST}` } } });
    const images = podTemplates(objects).flatMap(({ spec }) => containersOf(spec).map((c) => c.image!));
    expect(images.length).toBeGreaterThan(SERVICES.length * 2);
    expect(images.filter((image) => !image.endsWith(`@${DIGEST}`))).toEqual([]);
    expect(mainContainer(serverDeployment(objects, 'sales')).image).toBe(`erp-sales:${chartMeta.appVersion}@${DIGEST}`);
  });
});

describe('the chart refuses', () => {
  it.each<[string, object, RegExp]>([
    ['a misspelt service setting', { services: { sales: { replicaz: 2 } } }, /replicaz/],
    ['a secret in the shared config', { config: { DATABASE_URL: 'postgres://u:p@h/db' } }, /DATABASE_URL/],
    ['a replica count that is not a number', { services: { sales: { replicas: 'two' } } }, /replicas/],
    [
      'an HPA maximum below its minimum',
      { services: { sales: { replicas: 4, maxReplicas: 2 } } },
      /maxReplicas \(2\) is below replicas \(4\)/,
    ],
    ['a public service without an HTTP port', { services: { sales: { public: true } } }, /needs httpPort/],
    [
      'more database connections at the maximum replicas than Postgres takes',
      { postgres: { maxConnections: 100 } },
      /could open 480 database connections at their maximum replicas .* over postgres.maxConnections \(100\)/,
    ],
    ['an Ingress without TLS unless told TLS ends before it', { ingress: { tls: [] } }, /ingress.tls is empty/],
    ['a cert-manager issuer without hosts to certify', { ingress: { clusterIssuer: 'letsencrypt' } }, /clusterIssuer needs ingress.hosts/],
    ['an image digest that is not a sha256', { services: { sales: { digest: 'latest' } } }, /digest/],
    ['a helm test image pinned by something else than a sha256', { tests: { image: 'curlimages/curl@md5:abc' } }, /image/],
    [
      'more pooled server connections per database user than Postgres takes',
      { postgres: { pooler: { poolSize: 60 } } },
      /the pooler of postgres could open 480 server connections \(8 database users × postgres.pooler.poolSize 60\), over postgres.serverConnections \(90\)/,
    ],
    [
      'NATS without TLS unless told plaintext is meant',
      { existingSecrets: { nats: { tlsSecret: '' } } },
      /existingSecrets.nats.tlsSecret is empty: name the Secret with the CA of the NATS servers .* or set existingSecrets.nats.allowPlaintext=true/,
    ],
    [
      'alerts without the runbook URL they link to',
      { monitoring: { prometheusRule: { runbookBaseUrl: '' } } },
      /monitoring.prometheusRule.runbookBaseUrl is empty: every alert links to its section of docs\/alerts.md under it/,
    ],
    ['a runbook URL that is not one', { monitoring: { prometheusRule: { runbookBaseUrl: '<no value>' } } }, /runbookBaseUrl/],
  ])('%s', async (_case, values, message) => {
    await expect(render({ values })).rejects.toThrow(message);
  });

  it('an image not pinned by a digest, unless told the images are built on this machine', async () => {
    const runbook = { monitoring: { prometheusRule: { runbookBaseUrl: RUNBOOK_BASE_URL } } };
    await expect(render({ bare: true, values: runbook })).rejects.toThrow(
      /services\.[a-z-]+: the image erp-[a-z-]+:[0-9.]+ is not pinned by a digest: set services\.[a-z-]+\.digest=sha256:…/,
    );
    // A reference that carries its digest (what skaffold hands over after a push) is pinned too.
    const pushed = Object.fromEntries(SERVICES.map((s) => [s, { image: `registry.example.com/erp-${s}:abc1234@${DIGEST}` }]));
    await expect(render({ bare: true, values: { ...runbook, services: pushed } })).resolves.toEqual(expect.any(Array));
    await expect(render({ bare: true, values: { ...runbook, image: { requireDigest: false } } })).resolves.toEqual(expect.any(Array));
  });

  it('plaintext to NATS only when told, and then mounts no CA', async () => {
    const objects = await render({ values: { existingSecrets: { nats: { tlsSecret: '', allowPlaintext: true } } } });
    expect(podTemplates(objects).filter(({ spec }) => (spec.volumes ?? []).some((v) => v.name === 'nats-tls'))).toEqual([]);
  });

  it('a missing runbook URL only while it renders the PrometheusRule', async () => {
    const objects = await render({ values: { monitoring: { prometheusRule: { enabled: false, runbookBaseUrl: '' } } } });
    expect(ofKind(objects, 'PrometheusRule')).toEqual([]);
  });
});

describe('the development cluster dependencies (deploy/k8s)', () => {
  let objects: KubeObject[];
  beforeAll(async () => {
    objects = parseObjects(await toolbox.kubectl(['kustomize', path.join(ROOT, 'deploy', 'k8s')]));
  });

  it('build with kustomize into objects that match their Kubernetes schema', () => {
    expect(objects.length).toBeGreaterThan(0);
    for (const object of objects) expect(() => validateObject(object)).not.toThrow();
  });

  it('name every image in the kustomization, so that one `digest:` there pins it', async () => {
    const kustomization = parse(fs.readFileSync(path.join(ROOT, 'deploy', 'k8s', 'kustomization.yaml'), 'utf8')) as {
      images: Array<{ name: string; newTag: string }>;
    };
    const images = podTemplates(objects).flatMap(({ spec }) => containersOf(spec).map((c) => c.image!));
    expect(images.map((image) => image.replace(/:[^:/]+$/, '')).sort()).toEqual(kustomization.images.map((i) => i.name).sort());
    // An overlay that gives each a digest (as deploy/README.md shows) pins them all.
    const overlayDir = path.dirname(toolbox.writeFile('kustomization.yaml', ''));
    const overlay = toolbox.writeFile(
      'kustomization.yaml',
      [
        'resources:',
        `  - ${path.relative(overlayDir, path.join(ROOT, 'deploy', 'k8s'))}`,
        'images:',
        ...kustomization.images.map((i) => `  - name: ${i.name}\n    digest: sha256:${'0f'.repeat(32)}`),
      ].join('\n'),
    );
    const pinned = parseObjects(await toolbox.kubectl(['kustomize', path.dirname(overlay)]));
    const pinnedImages = podTemplates(pinned).flatMap(({ spec }) => containersOf(spec).map((c) => c.image!));
    expect(pinnedImages.filter((image) => !image.endsWith(`@sha256:${'0f'.repeat(32)}`))).toEqual([]);
  });

  it("carry the labels and ports that the chart's egress rules allow", () => {
    const egress = chartValues.networkPolicy.egress as unknown as Record<
      string,
      { ports: Array<{ port: number }>; to: Array<{ podSelector?: { matchLabels?: Record<string, string> } }> }
    >;
    const deployments = ofKind<IDeployment>(objects, 'Deployment');
    for (const target of ['nats', 'postgres', 'redis', 'otel']) {
      const selector = egress[target]!.to[0]!.podSelector!.matchLabels;
      const sut = deployments.find((d) => selects(selector, d.spec!.template.metadata!.labels));
      expect({ target, found: Boolean(sut) }).toEqual({ target, found: true });
      const containerPorts = sut!.spec!.template.spec!.containers.flatMap((c) => (c.ports ?? []).map((p) => p.containerPort));
      expect(containerPorts).toEqual(expect.arrayContaining(egress[target]!.ports.map((p) => p.port)));
    }
  });

  it('provide the Secrets the chart reads, and Services at the addresses of its default config', () => {
    const secrets = ofKind<ISecret>(objects, 'Secret');
    // The development values use the shared database Secret (deploy/values-dev.yaml).
    const { nats, databasePerService: _perService, ...urls } = chartValues.existingSecrets;
    for (const ref of Object.values(urls)) {
      expect(Object.keys(named(secrets, ref.name).stringData ?? {})).toContain(ref.key);
    }
    // A password for every bus identity, which nats-server and each service read.
    const identities = [...SERVICES, ADMIN_IDENTITY, OPERATOR_IDENTITY];
    expect(Object.keys(named(secrets, nats.name).stringData ?? {}).sort()).toEqual(identities.map(passwordVariable).sort());
    const config = (parse(fs.readFileSync(path.join(CHART, 'values.yaml'), 'utf8')) as { config: Record<string, string> }).config;
    const services = ofKind<IService>(objects, 'Service');
    for (const url of [config.NATS_URL!, config.OTEL_EXPORTER_OTLP_ENDPOINT!]) {
      const { hostname, port } = new URL(url);
      expect(named(services, hostname).spec!.ports!.map((p) => p.port)).toContain(Number(port));
    }
  });
});

describe('skaffold.yaml and deploy/compose.yaml', () => {
  it('build one image per service from the root Dockerfile and hand each to its chart entry', () => {
    const skaffold = parse(fs.readFileSync(path.join(ROOT, 'skaffold.yaml'), 'utf8')) as {
      build: { artifacts: Array<{ image: string; docker: { dockerfile: string; buildArgs: { SERVICE: string } } }> };
      deploy: { helm: { releases: Array<{ chartPath: string; setValueTemplates: Record<string, string> }> } };
    };
    const artifacts = skaffold.build.artifacts;
    expect(artifacts.map((a) => a.docker.buildArgs.SERVICE).sort()).toEqual(SERVICES);
    for (const artifact of artifacts) {
      expect(artifact).toEqual({
        image: `erp-${artifact.docker.buildArgs.SERVICE}`,
        docker: expect.objectContaining({ dockerfile: 'Dockerfile' }),
      });
    }
    const release = skaffold.deploy.helm.releases[0]!;
    expect(release.chartPath).toBe('charts/erp');
    expect(release.setValueTemplates).toEqual({
      ...Object.fromEntries(SERVICES.map((s) => [`services.${s}.image`, `{{.IMAGE_FULLY_QUALIFIED_erp_${s.replace(/-/g, '_')}}}`])),
      'monitoring.prometheusRule.runbookBaseUrl': '{{.ERP_RUNBOOK_BASE_URL}}',
    });
  });

  /**
   * What skaffold hands helm: the release's valuesFiles and setValueTemplates after the profile's
   * JSON patches, each template filled in (an image reference as skaffold builds it, an environment variable).
   */
  const skaffoldRender = async (profile: 'dev' | undefined, fill: (template: string) => string) => {
    const skaffold = parse(fs.readFileSync(path.join(ROOT, 'skaffold.yaml'), 'utf8')) as {
      deploy: { helm: { releases: Array<{ valuesFiles?: string[]; setValueTemplates: Record<string, string> }> } };
      profiles: Array<{ name: string; patches: Array<{ op: 'add' | 'remove'; path: string; value?: unknown }> }>;
    };
    const release = skaffold.deploy.helm.releases[0]! as Record<string, unknown> & { setValueTemplates: Record<string, string> };
    for (const patch of skaffold.profiles.find((p) => p.name === profile)?.patches ?? []) {
      const rest = patch.path.split('/').slice(5);
      expect(patch.path.startsWith('/deploy/helm/releases/0/')).toBe(true);
      const parent = rest.slice(0, -1).reduce<Record<string, unknown>>((node, key) => node[key] as Record<string, unknown>, release);
      const key = rest.at(-1)!;
      expect({ path: patch.path, exists: key in parent }).toEqual({ path: patch.path, exists: patch.op === 'remove' });
      if (patch.op === 'add') parent[key] = patch.value;
      else delete parent[key];
    }
    const files = ((release.valuesFiles as string[] | undefined) ?? []).flatMap((file) => ['--values', path.join(ROOT, file)]);
    const sets = Object.entries(release.setValueTemplates).flatMap(([key, template]) => ['--set', `${key}=${fill(template)}`]);
    return parseObjects(await toolbox.helm(['template', RELEASE, CHART, '--namespace', NAMESPACE, ...files, ...sets]));
  };
  const imageOf = (template: string, suffix: string) => {
    const artifact = /IMAGE_FULLY_QUALIFIED_(\w+)/.exec(template)?.[1];
    return artifact ? `${artifact.replace(/_/g, '-')}:abc1234${suffix}` : undefined;
  };

  it("renders the chart as `skaffold dev` does: the dev profile's values, images built here by tag, no runbook URL asked", async () => {
    const objects = await skaffoldRender('dev', (t) => imageOf(t, '') ?? t);
    expect(mainContainer(serverDeployment(objects, 'sales')).image).toBe('erp-sales:abc1234');
    expect(ofKind(objects, 'PrometheusRule')).toEqual([]);
  });

  it('renders the chart as `skaffold run --default-repo` does, with the pushed digests and ERP_RUNBOOK_BASE_URL, and refuses without it', async () => {
    const pushed = (runbook: string) => (t: string) =>
      t === '{{.ERP_RUNBOOK_BASE_URL}}' ? runbook : (imageOf(t, `@${DIGEST}`)?.replace(/^/, 'registry.example.com/') ?? t);
    const objects = await skaffoldRender(undefined, pushed(RUNBOOK_BASE_URL));
    expect(mainContainer(serverDeployment(objects, 'sales')).image).toBe(`registry.example.com/erp-sales:abc1234@${DIGEST}`);
    expect(ofKind(objects, 'PrometheusRule')).toHaveLength(1);
    // An unset variable is an empty value or Go's "<no value>": either refuses to render.
    await expect(skaffoldRender(undefined, pushed(''))).rejects.toThrow(/runbookBaseUrl is empty/);
    await expect(skaffoldRender(undefined, pushed('<no value>'))).rejects.toThrow(/runbookBaseUrl/);
  });

  it('runs the dependencies, and every service from the same Dockerfile under the services profile', () => {
    const compose = parse(fs.readFileSync(path.join(ROOT, 'deploy', 'compose.yaml'), 'utf8'), { merge: true }) as {
      services: Record<string, { build?: { context: string; dockerfile: string; args?: { SERVICE?: string } }; profiles?: string[] }>;
    };
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['postgres', 'nats', 'redis', 'otel-collector', 'jaeger']));
    const built = Object.entries(compose.services).filter(([, s]) => s.build);
    expect(built.map(([name]) => name).sort()).toEqual(SERVICES);
    for (const [name, service] of built) {
      expect({ name, build: service.build, profiles: service.profiles }).toEqual({
        name,
        build: { context: '..', dockerfile: 'Dockerfile', args: { SERVICE: name } },
        profiles: ['services'],
      });
    }
  });
});
