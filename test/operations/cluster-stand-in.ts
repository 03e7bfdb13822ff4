import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { KubeObject } from '../chart/kube-objects';

/** Where the scripts below find the real binaries (the toolbox's helm and kubectl) and the pod runner. */
const RUN_POD = path.join(__dirname, 'run-pod.ts');

/**
 * What the runbook's `helm` and `kubectl` lines talk to in test/operations/runbook.spec.ts, with no
 * cluster: `kubectl` and `helm` scripts first on PATH, in front of the real binaries.
 * - `helm upgrade --install …` renders with `helm template` and the same flags and values (less
 *   --wait, --timeout), and what it renders becomes the namespace's objects.
 * - `helm history` and `helm rollback` run as they are, against an API server that refuses every
 *   connection: helm parses the command line (an unknown flag or a missing argument fails) and
 *   stops where it needs the cluster; that stop is their success here, and each is logged.
 * - `kubectl run` makes its Pod with the real kubectl (--dry-run=client, without the flags that
 *   attach to it), against an API server that answers discovery and GETs of the rendered objects;
 *   the Pod is kept (lastPod) and run by run-pod.ts with the environment it would get.
 * - any other `kubectl` reads from that API server (`kubectl get deploy … -o jsonpath=…`).
 */
export class ClusterStandIn {
  private constructor(
    private readonly dir: string,
    private readonly server: http.Server,
    private readonly state: { objects: KubeObject[] },
  ) {}

  static async start(dir: string, binaries: { helm: string; kubectl: string }): Promise<ClusterStandIn> {
    const state = { objects: [] as KubeObject[] };
    const server = http.createServer((req, res) => answer(state.objects, req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    const script = (name: string, body: string) =>
      fs.writeFileSync(path.join(bin, name), `#!/usr/bin/env bash\nset -uo pipefail\n${body}`, { mode: 0o755 });
    script(
      'helm',
      `log=${JSON.stringify(path.join(dir, 'helm.log'))}
export HELM_KUBEAPISERVER=http://127.0.0.1:1 KUBECONFIG=${JSON.stringify(path.join(dir, 'no-kubeconfig'))}
if [ "$1" = upgrade ]; then
  args=(); skip=0
  for a in "\${@:2}"; do
    if [ $skip = 1 ]; then skip=0; continue; fi
    case "$a" in --install|--wait|--atomic) ;; --timeout) skip=1 ;; --timeout=*) ;; *) args+=("$a") ;; esac
  done
  ${JSON.stringify(binaries.helm)} template "\${args[@]}" > ${JSON.stringify(path.join(dir, 'rendered.yaml'))} || exit $?
  echo "upgrade rendered: $*" >> "$log"
  exit 0
fi
out=$(${JSON.stringify(binaries.helm)} "$@" 2>&1); status=$?
if [ $status -ne 0 ] && grep -q 'cluster unreachable' <<<"$out"; then echo "parsed up to the cluster: $*" >> "$log"; exit 0; fi
echo "$out" >&2; exit $status
`,
    );
    script(
      'kubectl',
      `before=(); after=(); run=0; rest=0
for a in "$@"; do
  if [ $rest = 1 ]; then after+=("$a"); continue; fi
  case "$a" in --) rest=1 ;; --rm|-i|-t|-it|--stdin|--tty|--attach) ;; run) run=1; before+=("$a") ;; *) before+=("$a") ;; esac
done
real=${JSON.stringify(binaries.kubectl)}
if [ $run = 1 ]; then
  "$real" --server=${api} "\${before[@]}" --dry-run=client -o json -- "\${after[@]}" > ${JSON.stringify(path.join(dir, 'pod.json'))} || exit $?
  exec node --conditions=development --import tsx ${JSON.stringify(RUN_POD)} ${JSON.stringify(path.join(dir, 'pod.json'))}
fi
exec "$real" --server=${api} "$@"
`,
    );
    return new ClusterStandIn(dir, server, state);
  }

  /** PATH with the scripts first, and where run-pod.ts reads the namespace's Secrets and ConfigMaps. */
  env(secrets: Record<string, Record<string, string>>, configMaps: Record<string, Record<string, string>>): NodeJS.ProcessEnv {
    const file = path.join(this.dir, 'objects.json');
    fs.writeFileSync(file, JSON.stringify({ secrets, configMaps }));
    return { PATH: `${path.join(this.dir, 'bin')}:${process.env.PATH ?? ''}`, STAND_IN_OBJECTS: file };
  }

  /** What the last `helm upgrade --install` rendered (empty before one). */
  rendered(): string {
    const file = path.join(this.dir, 'rendered.yaml');
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  }

  /** The objects the API server answers with. */
  serve(objects: KubeObject[]): void {
    this.state.objects = objects;
  }

  lastPod(): unknown {
    return JSON.parse(fs.readFileSync(path.join(this.dir, 'pod.json'), 'utf8'));
  }

  helmLog(): string[] {
    const file = path.join(this.dir, 'helm.log');
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n') : [];
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Resources the API server knows: kubectl's discovery, then GETs of one named object. */
const RESOURCES: Record<string, Array<{ name: string; kind: string; shortNames?: string[] }>> = {
  v1: [
    { name: 'pods', kind: 'Pod' },
    { name: 'configmaps', kind: 'ConfigMap' },
    { name: 'services', kind: 'Service' },
  ],
  'apps/v1': [{ name: 'deployments', kind: 'Deployment', shortNames: ['deploy'] }],
};

function answer(objects: KubeObject[], req: http.IncomingMessage, res: http.ServerResponse): void {
  const send = (status: number, body: object) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const url = (req.url ?? '').split('?')[0]!;
  if (url === '/api') return send(200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
  if (url === '/apis')
    return send(200, {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [
        {
          name: 'apps',
          versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
          preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
        },
      ],
    });
  const groupVersion = url === '/api/v1' ? 'v1' : url === '/apis/apps/v1' ? 'apps/v1' : undefined;
  if (groupVersion)
    return send(200, {
      kind: 'APIResourceList',
      groupVersion,
      resources: RESOURCES[groupVersion]!.map((r) => ({
        ...r,
        namespaced: true,
        singularName: r.kind.toLowerCase(),
        verbs: ['get', 'create'],
      })),
    });
  const match = /^\/(?:api\/v1|apis\/apps\/v1)\/namespaces\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url);
  const kind =
    match &&
    Object.values(RESOURCES)
      .flat()
      .find((r) => r.name === match[2])?.kind;
  const object = kind && objects.find((o) => o.kind === kind && o.metadata.name === match[3]);
  if (req.method === 'GET' && object) return send(200, { ...object, metadata: { ...object.metadata, namespace: match[1] } });
  send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `${url} not found` });
}
