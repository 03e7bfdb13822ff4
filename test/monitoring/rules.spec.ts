import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import type { ICronJob } from 'kubernetes-models/batch/v1/CronJob';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IService } from 'kubernetes-models/v1/Service';
import type { IPrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { openToolbox, type Toolbox } from '../chart/toolbox';
import { containersOf, named, ofKind, parseObjects, podTemplates, selects, validateObject, type KubeObject } from '../chart/kube-objects';
import {
  MONITORING_ON,
  PROMTOOL,
  RUNBOOK_BASE_URL,
  alertRules,
  ruleGroups,
  dashboardQueries,
  docAnchors,
  metricsDefinedInCode,
  metricsUsedBy,
} from './monitoring';

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const CHART = path.join(ROOT, 'charts', 'erp');
const RELEASE = 'erp';
const NAMESPACE = 'erp-test';
const ALERTS_DOC = fs.readFileSync(path.join(ROOT, 'docs', 'alerts.md'), 'utf8');
const UNIT_TESTS = ['alerts.test.yaml', 'alerts-infrastructure.test.yaml', 'alerts-daily.test.yaml', 'alerts-weekly.test.yaml'];

let toolbox: Toolbox;
let objects: KubeObject[];
beforeAll(async () => {
  if (!fs.existsSync(PROMTOOL)) throw new Error(`${PROMTOOL} is missing: apt-get install prometheus (.ci/run does)`);
  toolbox = openToolbox();
  const values = toolbox.writeFile('monitoring.json', JSON.stringify(MONITORING_ON));
  objects = parseObjects(await toolbox.helm(['template', RELEASE, CHART, '--namespace', NAMESPACE, '--values', values]));
});
afterAll(() => toolbox?.dispose());

const promtool = async (args: string[]) => {
  try {
    return (await execFileAsync(PROMTOOL, args, { timeout: 240_000 })).stdout;
  } catch (err) {
    const failure = err as Error & { stdout?: string; stderr?: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${failure.stdout ?? ''}${failure.stderr ?? ''}`, { cause: err });
  }
};

describe('the chart with monitoring on', () => {
  it('passes helm lint --strict and renders objects that match their schemas', async () => {
    const values = toolbox.writeFile('monitoring-lint.json', JSON.stringify(MONITORING_ON));
    expect(await toolbox.helm(['lint', '--strict', CHART, '--namespace', NAMESPACE, '--values', values])).toMatch(/0 chart\(s\) failed/);
    for (const object of objects) expect(() => validateObject(object)).not.toThrow();
    expect(objects.map((o) => o.kind)).toEqual(expect.arrayContaining(['PrometheusRule', 'ServiceMonitor', 'CronJob']));
  });

  it('renders all of it but the audit with the default values, and none of it with the development values', async () => {
    const required = toolbox.writeFile(
      'required.json',
      JSON.stringify({ image: { requireDigest: false }, monitoring: { prometheusRule: { runbookBaseUrl: RUNBOOK_BASE_URL } } }),
    );
    const defaults = parseObjects(await toolbox.helm(['template', RELEASE, CHART, '--namespace', NAMESPACE, '--values', required]));
    // The shops' drift check is a CronJob of the product, not of monitoring: it runs in both.
    const kinds = (rendered: KubeObject[]) =>
      rendered
        .filter(
          (o) =>
            ['PrometheusRule', 'ServiceMonitor'].includes(o.kind) ||
            (o.kind === 'CronJob' && o.metadata.name === `${RELEASE}-audit`) ||
            o.metadata.labels?.grafana_dashboard,
        )
        .map((o) => o.kind)
        .sort();
    // The audit needs the read-only auditor's Secret, which a database administrator provisions first.
    expect(kinds(defaults)).toEqual(['ConfigMap', 'PrometheusRule', 'ServiceMonitor']);
    const dev = ['template', RELEASE, CHART, '--namespace', NAMESPACE, '--values', path.join(ROOT, 'deploy', 'values-dev.yaml')];
    expect(kinds(parseObjects(await toolbox.helm(dev)))).toEqual([]);
  });

  it('alerts on the dependencies from their exporters, each read in the release’s namespace unless given a selector', async () => {
    const rule = named(ofKind<IPrometheusRule>(objects, 'PrometheusRule'), RELEASE);
    const infrastructure = ruleGroups(rule).find((g) => g.name === 'erp-infrastructure.alerts')!;
    expect(infrastructure.rules.map((r) => r.alert)).toEqual([
      'ErpPostgresDown',
      'ErpPostgresReplicationLagging',
      'ErpPostgresStandbyMissing',
      'ErpPostgresFailover',
      'ErpRedisDown',
      'ErpNatsJetStreamNoQuorum',
      'ErpNatsJetStreamServersMissing',
      'ErpCertificateExpiring',
      'ErpVolumeFillingUp',
    ]);
    const exporters = ['pg_up', 'redis_up', 'jetstream_server_jetstream_disabled', 'certmanager_certificate_expiration_timestamp_seconds'];
    for (const metric of [...exporters, 'kubelet_volume_stats_available_bytes', 'kubelet_volume_stats_capacity_bytes']) {
      const reading = infrastructure.rules.filter((r) => String(r.expr).includes(`${metric}{`));
      expect({ metric, read: reading.length > 0 }).toEqual({ metric, read: true });
      for (const r of reading) expect(String(r.expr)).toContain(`${metric}{namespace="${NAMESPACE}"`);
    }
    const values = {
      ...MONITORING_ON,
      monitoring: {
        ...MONITORING_ON.monitoring,
        prometheusRule: {
          ...MONITORING_ON.monitoring.prometheusRule,
          infrastructure: { postgres: { selector: 'job="postgres-exporter"' }, volumes: { enabled: false } },
        },
      },
    };
    const file = toolbox.writeFile('monitoring-infrastructure.json', JSON.stringify(values));
    const rendered = parseObjects(await toolbox.helm(['template', RELEASE, CHART, '--namespace', NAMESPACE, '--values', file]));
    const sut = alertRules(named(ofKind<IPrometheusRule>(rendered, 'PrometheusRule'), RELEASE));
    expect(sut.find((a) => a.alert === 'ErpPostgresDown')?.expr).toContain('pg_up{job="postgres-exporter"}');
    expect(sut.filter((a) => a.alert === 'ErpVolumeFillingUp')).toEqual([]);
  });

  it("scrapes every service's ops port through its Service, in the release's namespace", () => {
    const sut = named(ofKind<IServiceMonitor>(objects, 'ServiceMonitor'), RELEASE);
    expect(sut.metadata.labels).toMatchObject(MONITORING_ON.monitoring.labels);
    expect(sut.spec.namespaceSelector?.matchNames).toEqual([NAMESPACE]);
    const services = ofKind<IService>(objects, 'Service').filter((s) => selects(sut.spec.selector.matchLabels, s.metadata?.labels));
    expect(services.map((s) => s.metadata!.name).sort()).toEqual(
      ofKind(objects, 'Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    );
    const port = sut.spec.endpoints![0]!.port;
    for (const service of services)
      expect({ service: service.metadata!.name, ports: service.spec!.ports!.map((p) => p.name) }).toMatchObject({
        ports: expect.arrayContaining([port]),
      });
  });

  it('gives every alert a severity, a summary, a description and a runbook_url to its own section of docs/alerts.md', () => {
    const rule = named(ofKind<IPrometheusRule>(objects, 'PrometheusRule'), RELEASE);
    const anchors = docAnchors(ALERTS_DOC);
    const alerts = alertRules(rule);
    expect(alerts.length).toBeGreaterThanOrEqual(14);
    for (const alert of alerts) {
      expect({ alert: alert.alert, severity: alert.labels?.severity }).toEqual({
        alert: alert.alert,
        severity: expect.stringMatching(/^(critical|warning)$/),
      });
      expect(alert.annotations).toEqual(expect.objectContaining({ summary: expect.any(String), description: expect.any(String) }));
      const url = new URL(alert.annotations!.runbook_url!);
      expect({ alert: alert.alert, anchor: url.hash }).toEqual({ alert: alert.alert, anchor: `#${alert.alert!.toLowerCase()}` });
      expect({ alert: alert.alert, documented: anchors.has(url.hash.slice(1)) }).toEqual({ alert: alert.alert, documented: true });
    }
  });

  it("adds the configured routing labels to every alert and takes an alert's own `for` from the values", async () => {
    const values = {
      image: { requireDigest: false },
      monitoring: {
        serviceMonitor: { enabled: false },
        audit: { enabled: false },
        prometheusRule: { enabled: true, runbookBaseUrl: RUNBOOK_BASE_URL, alertLabels: { team: 'erp' }, for: { ErpRedisFallback: '10m' } },
      },
      shops: { drift: { enabled: false } },
    };
    const file = toolbox.writeFile('monitoring-routing.json', JSON.stringify(values));
    const rendered = parseObjects(await toolbox.helm(['template', RELEASE, CHART, '--namespace', NAMESPACE, '--values', file]));
    const sut = alertRules(named(ofKind<IPrometheusRule>(rendered, 'PrometheusRule'), RELEASE));
    expect(sut.filter((a) => a.labels?.team !== 'erp').map((a) => a.alert)).toEqual([]);
    expect(sut.find((a) => a.alert === 'ErpRedisFallback')?.for).toBe('10m');
    expect(sut.find((a) => a.alert === 'ErpOutboxEventsAgeing')?.for).toBe('5m');
    // Without the audit or the drift CronJob, nothing alerts on them; without the ServiceMonitor, nothing on its targets.
    expect(sut.filter((a) => a.alert?.startsWith('ErpAudit') || a.alert === 'ErpShopDriftJobFailed')).toEqual([]);
    expect(sut.filter((a) => ['ErpServiceDown', 'ErpTargetDown', 'ErpGatewayNoTraffic'].includes(a.alert!))).toEqual([]);
  });

  it("alerts on each service's scrape targets by the job the ServiceMonitor gives them: the name of the Service it scrapes through", () => {
    const rule = named(ofKind<IPrometheusRule>(objects, 'PrometheusRule'), RELEASE);
    const monitor = named(ofKind<IServiceMonitor>(objects, 'ServiceMonitor'), RELEASE);
    const scraped = ofKind<IService>(objects, 'Service')
      .filter((s) => selects(monitor.spec.selector.matchLabels, s.metadata?.labels))
      .map((s) => s.metadata!.name!)
      .sort();
    // The operator names a target's job after its Service unless the ServiceMonitor sets jobLabel.
    expect(monitor.spec.jobLabel).toBeUndefined();
    const down = alertRules(rule).filter((a) => a.alert === 'ErpServiceDown');
    expect(down.map((a) => /job="([^"]+)"/.exec(String(a.expr))?.[1]).sort()).toEqual(scraped);
    expect(down.map((a) => `${RELEASE}-${a.labels!.service}`).sort()).toEqual(scraped);
    const targetDown = alertRules(rule).find((a) => a.alert === 'ErpTargetDown')!;
    expect(/job=~"([^"]+)"/.exec(String(targetDown.expr))?.[1]?.split('|').sort()).toEqual(scraped);
  });

  it('passes promtool check rules, and promtool test rules with a test that fires every alert and one where it stays silent', async () => {
    const rule = named(ofKind<IPrometheusRule>(objects, 'PrometheusRule'), RELEASE);
    const rulesFile = toolbox.writeFile('rules.yaml', stringify({ groups: ruleGroups(rule) }));
    expect(await promtool(['check', 'rules', rulesFile])).toMatch(/SUCCESS/);

    const files = UNIT_TESTS.map((file) => toolbox.writeFile(file, fs.readFileSync(path.join(__dirname, file), 'utf8')));
    const fired = new Set<string>();
    const silent = new Set<string>();
    for (const file of files) {
      const { tests } = parse(fs.readFileSync(file, 'utf8')) as {
        tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
      };
      for (const check of tests.flatMap((t) => t.alert_rule_test)) (check.exp_alerts.length > 0 ? fired : silent).add(check.alertname);
    }
    const names = alertRules(rule).map((a) => a.alert!);
    expect(names.filter((n) => !fired.has(n))).toEqual([]);
    expect(names.filter((n) => !silent.has(n))).toEqual([]);
    const output = await promtool(['test', 'rules', ...files]);
    expect(output.match(/SUCCESS/g)).toHaveLength(files.length);
  }, 300_000);

  it("loads the dashboards through Grafana's sidecar label, each query valid PromQL", async () => {
    const configMap = ofKind<IConfigMap>(objects, 'ConfigMap').find((c) => c.metadata?.labels?.grafana_dashboard === '1');
    expect(configMap).toBeDefined();
    const dashboards = Object.entries(configMap!.data ?? {});
    expect(dashboards.map(([name]) => name)).toEqual(fs.readdirSync(path.join(CHART, 'dashboards')).filter((f) => f.endsWith('.json')));
    const queries = dashboards.flatMap(([, json]) => dashboardQueries(JSON.parse(json)));
    expect(queries.length).toBeGreaterThan(10);
    // promtool parses a rule's expression like Prometheus does: every query as a recording rule.
    const file = toolbox.writeFile(
      'dashboard-queries.yaml',
      stringify({
        groups: [
          {
            name: 'dashboards',
            rules: queries.map((expr, i) => ({ record: `dashboard:query${i}`, expr: expr.replaceAll('$namespace', NAMESPACE) })),
          },
        ],
      }),
    );
    expect(await promtool(['check', 'rules', file])).toMatch(/SUCCESS/);
  });

  it('documents in docs/alerts.md every metric the services export, and uses no metric they do not', () => {
    const rule = named(ofKind<IPrometheusRule>(objects, 'PrometheusRule'), RELEASE);
    const configMap = ofKind<IConfigMap>(objects, 'ConfigMap').find((c) => c.metadata?.labels?.grafana_dashboard === '1')!;
    const exported = metricsDefinedInCode(ROOT);
    const documented = new Set([...ALERTS_DOC.matchAll(/`(erp_[a-z_]+)`/g)].map((m) => m[1]!));
    expect([...exported].filter((m) => !documented.has(m))).toEqual([]);
    const used = metricsUsedBy([
      ...ruleGroups(rule).flatMap((g) => g.rules.map((r) => String(r.expr))),
      ...Object.values(configMap.data ?? {}).flatMap((json) => dashboardQueries(JSON.parse(json))),
    ]);
    expect([...used].filter((m) => !exported.has(m))).toEqual([]);
  });

  it('audits the books on schedule with the admin CLI of an image, as the read-only role, confined like the services', () => {
    const sut = named(ofKind<ICronJob>(objects, 'CronJob'), `${RELEASE}-audit`);
    expect(sut.spec?.concurrencyPolicy).toBe('Forbid');
    const template = podTemplates([sut]).at(0)!;
    const container = containersOf(template.spec)[0]!;
    expect(container.image).toMatch(/\/?erp-gateway:/);
    expect(container.command).toEqual(['node', '/app/services/admin/dist/cli.js', 'audit']);
    expect(container.env).toEqual([
      {
        name: 'DATABASE_URL',
        valueFrom: { secretKeyRef: { name: MONITORING_ON.monitoring.audit.databaseSecret.name, key: 'DATABASE_URL' } },
      },
    ]);
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, runAsNonRoot: true });
    expect(template.spec.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(template.spec.automountServiceAccountToken).toBe(false);
    // The CLI is built into every image (Dockerfile), which is where the command above finds it.
    expect(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')).toMatch(
      /tsc -b "services\/\$SERVICE\/tsconfig.json" services\/admin\/tsconfig.json/,
    );

    const policy = ofKind<
      KubeObject & {
        spec: {
          podSelector: { matchLabels: Record<string, string> };
          ingress: unknown[];
          egress: Array<{ ports: Array<{ port: number }> }>;
        };
      }
    >(objects, 'NetworkPolicy').find((p) => selects(p.spec.podSelector.matchLabels, template.labels));
    expect(policy?.spec.ingress).toEqual([]);
    expect(policy?.spec.egress.flatMap((rule) => rule.ports.map((p) => p.port)).sort()).toEqual([53, 53, 5432]);
  });
});
