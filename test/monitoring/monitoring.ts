import fs from 'node:fs';
import path from 'node:path';
import type { IPrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';

/** Debian's prometheus package puts both binaries here. */
export const PROMTOOL = '/usr/bin/promtool';
export const PROMETHEUS = '/usr/bin/prometheus';

/** Where the rendered alerts link to (the promtool tests expect each runbook_url under it). */
export const RUNBOOK_BASE_URL = 'https://github.com/acme/erp/blob/main/docs/alerts.md';

/**
 * Every monitoring part of the chart on, labelled as kube-prometheus-stack's selectors expect, with
 * the runbook URL it requires. Images by tag: no digest changes what is read here.
 */
export const MONITORING_ON = {
  image: { requireDigest: false },
  monitoring: {
    labels: { release: 'kube-prometheus-stack' },
    serviceMonitor: { enabled: true },
    // A Postgres cluster with a synchronous standby, as deploy/values-ha.yaml: its standby's absence pages.
    prometheusRule: { enabled: true, runbookBaseUrl: RUNBOOK_BASE_URL, infrastructure: { postgres: { standbys: 1 } } },
    dashboards: { enabled: true },
    audit: { enabled: true, databaseSecret: { name: 'erp-auditor', key: 'DATABASE_URL' } },
  },
};

export interface Rule {
  alert?: string;
  record?: string;
  expr: string | number;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The rule groups of a rendered PrometheusRule. */
export function ruleGroups(rule: IPrometheusRule): Array<{ name: string; rules: Rule[] }> {
  return (rule.spec?.groups ?? []).map((g) => ({ name: g.name, rules: (g.rules ?? []) as Rule[] }));
}

export function alertRules(rule: IPrometheusRule): Rule[] {
  return ruleGroups(rule).flatMap((g) => g.rules.filter((r) => r.alert));
}

/** The PromQL of every panel of a Grafana dashboard (rows' nested panels included). */
export function dashboardQueries(dashboard: { panels?: Array<{ panels?: unknown[]; targets?: Array<{ expr?: string }> }> }): string[] {
  const panels = (dashboard.panels ?? []).flatMap((p) => [p, ...((p.panels ?? []) as typeof dashboard.panels & object)]);
  return panels.flatMap((p) => (p.targets ?? []).flatMap((t) => (t.expr ? [t.expr] : [])));
}

/** The anchors GitHub gives a Markdown document's headings. */
export function docAnchors(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#+ (.+)$/gm)].map((m) =>
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s-]/gu, '')
        .replace(/\s/g, '-'),
    ),
  );
}

/** The `erp_*` metrics the code registers (`name: 'erp_…'` in libs/ and services/, tests aside). */
export function metricsDefinedInCode(root: string): Set<string> {
  const names = new Set<string>();
  const visit = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!['node_modules', 'dist', 'test'].includes(entry.name)) visit(file);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
        for (const m of fs.readFileSync(file, 'utf8').matchAll(/name: '(erp_[a-z_]+)'/g)) names.add(m[1]!);
      }
    }
  };
  for (const dir of ['libs', 'services']) visit(path.join(root, dir));
  return names;
}

/** The `erp_*` metrics PromQL expressions read (a histogram's series counted as the histogram). */
export function metricsUsedBy(expressions: string[]): Set<string> {
  return new Set(expressions.flatMap((e) => [...e.matchAll(/\b(erp_[a-z_]+)/g)].map((m) => m[1]!.replace(/_(bucket|count|sum)$/, ''))));
}
