import { parseAllDocuments } from 'yaml';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { CronJob, type ICronJob } from 'kubernetes-models/batch/v1/CronJob';
import { Job, type IJob } from 'kubernetes-models/batch/v1/Job';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap, type IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { Pod, type IPod } from 'kubernetes-models/v1/Pod';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';

/** A rendered Kubernetes object, before it is known to be valid. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/**
 * The kinds the chart and deploy/ may render, each with its schema (from the Kubernetes OpenAPI
 * document). A kind missing here is a test failure, not a silent pass.
 */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Pod': Pod,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1/CronJob': CronJob,
  'batch/v1/Job': Job,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

/** Parses a multi-document YAML stream (helm template, kubectl kustomize); empty documents are skipped. */
export function parseObjects(stream: string): KubeObject[] {
  return parseAllDocuments(stream).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = doc.toJS();
    return value ? [value as KubeObject] : [];
  });
}

/** Throws, naming the object and every violation, unless the object matches its kind's schema. */
export function validateObject(object: KubeObject): void {
  const id = `${object.apiVersion}/${object.kind}`;
  const Model = MODELS[id];
  if (!Model) throw new Error(`${id} ${object.metadata?.name}: no Kubernetes schema known for this kind`);
  try {
    new Model(object as never).validate();
  } catch (err) {
    throw new Error(`${id} ${object.metadata.name}: ${(err as Error).message}`, { cause: err });
  }
}

export function ofKind<T>(objects: KubeObject[], kind: string): Array<T & KubeObject> {
  return objects.filter((o) => o.kind === kind) as Array<T & KubeObject>;
}

export function named<T extends KubeObject>(objects: T[], name: string): T {
  const found = objects.find((o) => o.metadata.name === name);
  if (!found) throw new Error(`no object named ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
}

/** Does a label selector (matchLabels only, which is all the chart uses) select these labels? */
export function selects(matchLabels: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  return Object.entries(matchLabels ?? {}).every(([key, value]) => labels?.[key] === value);
}

/** A label selector with match expressions too, as a NetworkPolicy's podSelector may carry them. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

/** Does a full label selector (matchLabels and matchExpressions: In, NotIn, Exists, DoesNotExist) select these labels? */
export function selectsPods(selector: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selects(selector?.matchLabels, labels)) return false;
  return (selector?.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    const value = labels?.[key];
    switch (operator) {
      case 'In':
        return value !== undefined && values.includes(value);
      case 'NotIn':
        return value === undefined || !values.includes(value);
      case 'Exists':
        return value !== undefined;
      case 'DoesNotExist':
        return value === undefined;
      default:
        throw new Error(`unknown selector operator ${operator}`);
    }
  });
}

export interface PodTemplate {
  owner: string;
  labels: Record<string, string>;
  spec: IPodSpec;
}

/** The pod specs of Deployments, Jobs, CronJobs and bare Pods. */
export function podTemplates(objects: KubeObject[]): PodTemplate[] {
  return objects.flatMap((o): PodTemplate[] => {
    const owner = `${o.kind}/${o.metadata.name}`;
    if (o.kind === 'Deployment' || o.kind === 'Job') {
      const template = (o as unknown as IDeployment | IJob).spec?.template;
      return template?.spec ? [{ owner, labels: template.metadata?.labels ?? {}, spec: template.spec }] : [];
    }
    if (o.kind === 'CronJob') {
      const template = (o as unknown as ICronJob).spec?.jobTemplate.spec?.template;
      return template?.spec ? [{ owner, labels: template.metadata?.labels ?? {}, spec: template.spec }] : [];
    }
    if (o.kind === 'Pod') {
      const pod = o as unknown as IPod;
      return pod.spec ? [{ owner, labels: pod.metadata?.labels ?? {}, spec: pod.spec }] : [];
    }
    return [];
  });
}

export function containersOf(spec: IPodSpec): IContainer[] {
  return [...(spec.initContainers ?? []), ...spec.containers];
}

/** The environment a container sees: its ConfigMap sources, then its own plain values (which win). */
export function effectiveEnv(container: IContainer, configMaps: IConfigMap[]): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const source of container.envFrom ?? []) {
    const configMap = configMaps.find((c) => c.metadata?.name === source.configMapRef?.name);
    Object.assign(env, configMap?.data ?? {});
  }
  for (const variable of container.env ?? []) env[variable.name] = variable.value;
  return env;
}
