// The Helm chart, rendered by helm itself and validated offline: lint --strict and strict decoding of every
// object into Kubernetes' own types for every value set in helm/invoicing/ci (scripts/chart-check.sh), then
// the rules a platform team relies on, read from the rendered objects. The tools are provisioned by
// scripts/chart-tools.sh (cached; a cold machine builds them, which the first hook waits for).
import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { serviceModules } from '../../deploy/modules';

const root = path.join(__dirname, '../..');
const chart = path.join(root, 'helm/invoicing');
const ci = (name: string) => path.join(chart, 'ci', `${name}-values.yaml`);
/** Every gRPC service the chart deploys: the code's modules and expenses (built in parallel, same contract). */
const SERVICES = [...new Set([...serviceModules.map((m) => m.name), 'expenses'])];
const CREDENTIALS = ['MONGO_URL', 'REDIS_URL', 'KAFKA_BROKERS', 'MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY', 'JWT_SECRET', 'CURSOR_SECRET', 'URL_SECRET', 'SMTP_URL'];

jest.setTimeout(900_000);

let helm = '';
beforeAll(() => {
  const out = execFileSync('bash', [path.join(root, 'scripts/chart-tools.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  helm = /^HELM=(.+)$/m.exec(out)![1];
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type K8s = { kind: string; apiVersion: string; metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: any; data?: Record<string, string> };

function render(release: string, args: string[]): K8s[] {
  const out = execFileSync(helm, ['template', release, chart, '--namespace', 'billing', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return parseAllDocuments(out)
    .map((d) => d.toJS() as K8s)
    .filter(Boolean);
}
const renderFailure = (args: string[]) => spawnSync(helm, ['template', 'inv', chart, ...args], { encoding: 'utf8' });
const find = (objects: K8s[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
};
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const podSpecs = (objects: K8s[]): Array<{ owner: string; spec: any }> =>
  objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job').map((o) => ({ owner: `${o.kind}/${o.metadata.name}`, spec: o.spec.template.spec }));
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const envOf = (o: K8s): Record<string, any> => Object.fromEntries(o.spec.template.spec.containers[0].env.map((e: { name: string }) => [e.name, e]));

describe('chart validation (helm lint --strict, helm template, kube-check against k8s.io/api)', () => {
  it('passes for every value set in helm/invoicing/ci, at least the minimal and the production-like one', () => {
    const sets = readdirSync(path.join(chart, 'ci')).filter((f) => f.endsWith('-values.yaml'));
    expect(sets).toEqual(expect.arrayContaining(['minimal-values.yaml', 'production-values.yaml']));
    const run = spawnSync('bash', [path.join(root, 'scripts/chart-check.sh')], { encoding: 'utf8' });
    expect(run.stderr + run.stdout).not.toMatch(/failed|invalid/);
    expect(run.status).toBe(0);
    for (const set of sets) expect(run.stdout).toContain(`[chart] ${set.replace('-values.yaml', '')}: lint ok; kube-check:`);
  });

  it('the checker refuses an unknown field and a selector that misses its pods (it is strict, not a YAML parse)', () => {
    const tools = execFileSync('bash', [path.join(root, 'scripts/chart-tools.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const kubeCheck = /^KUBE_CHECK=(.+)$/m.exec(tools)![1];
    const deployment = (extra: string, label = 'a') =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: x }\nspec:\n  selector: { matchLabels: { app: a } }\n  template:\n    metadata: { labels: { app: ${label} } }\n    spec:\n      containers: [{ name: x, image: x${extra} }]\n`;
    expect(spawnSync(kubeCheck, [], { input: deployment(''), encoding: 'utf8' }).status).toBe(0);
    const unknown = spawnSync(kubeCheck, [], { input: deployment(', imagePullPolicyy: Always'), encoding: 'utf8' });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/unknown field .*imagePullPolicyy/);
    expect(spawnSync(kubeCheck, [], { input: deployment('', 'b'), encoding: 'utf8' }).stderr).toMatch(/selector does not match/);
  });
});

describe('installs with documented values only', () => {
  it('a default install stops at template time naming the missing MinIO credentials (it used to crash-loop on an empty MINIO_ACCESS_KEY)', () => {
    const run = renderFailure([]);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/engines\.minio\.accessKey is required/);
  });

  it('refuses an undocumented value (values.schema.json) and a short signing secret', () => {
    expect(renderFailure(['-f', ci('minimal'), '--set', 'gateway.replicaz=3']).stderr).toMatch(/replicaz/);
    expect(renderFailure(['-f', ci('minimal'), '--set', 'secrets.jwtSecret=short']).stderr).toMatch(/jwtSecret/);
  });

  it('generates every signing secret a pod reads (≥ 32 bytes) and fills every credential the pods read', () => {
    const objects = render('inv', ['-f', ci('minimal')]);
    const secret = find(objects, 'Secret', 'inv-secrets');
    for (const key of ['jwtSecret', 'cursorSecret']) expect(Buffer.from(secret.data![key], 'base64').length).toBeGreaterThanOrEqual(32);
    // URL_SECRET signs only the file-system blob store's URLs: on MinIO no process reads it.
    expect(secret.data).not.toHaveProperty('urlSecret');
    for (const key of ['mongoUrl', 'redisUrl', 'kafkaBrokers', 'minioAccessKey', 'minioSecretKey']) expect(Buffer.from(secret.data![key], 'base64').length).toBeGreaterThan(0);
  });

  it('every gRPC service the code has is deployed: Deployment, ClusterIP and headless Services, PodDisruptionBudget', () => {
    const objects = render('inv', ['-f', ci('minimal')]);
    for (const name of SERVICES) {
      expect(find(objects, 'Deployment', `inv-${name}`).spec.template.spec.containers[0].env).toContainEqual({ name: 'SERVICE', value: name });
      expect(find(objects, 'Service', `inv-${name}-headless`).spec.clusterIP).toBe('None');
      expect(find(objects, 'Service', `inv-${name}`).spec.type).toBe('ClusterIP');
      expect(find(objects, 'PodDisruptionBudget', `inv-${name}`).spec.maxUnavailable).toBe(1);
    }
  });

  it('two releases in one namespace share no object name', () => {
    const names = (objects: K8s[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`);
    const a = names(render('alpha', ['-f', ci('minimal')]));
    const b = names(render('beta', ['-f', ci('minimal')]));
    expect(a.filter((n) => b.includes(n))).toEqual([]);
  });
});

describe('credentials', () => {
  it.each(['minimal', 'production'])('reach the pods only through secretKeyRef (%s), never as plain values or in the ConfigMap', (set) => {
    const objects = render('inv', ['-f', ci(set)]);
    for (const { owner, spec } of podSpecs(objects)) {
      for (const container of spec.containers) {
        for (const env of container.env ?? []) {
          if (CREDENTIALS.includes(env.name)) expect({ owner, env: env.name, ref: Boolean(env.valueFrom?.secretKeyRef) }).toEqual({ owner, env: env.name, ref: true });
        }
      }
    }
    const config = find(objects, 'ConfigMap', 'inv-config');
    for (const name of CREDENTIALS) expect(config.data).not.toHaveProperty(name);
  });

  it('existing Secrets replace the chart-held credentials (production set)', () => {
    const objects = render('inv', ['-f', ci('production')]);
    const env = envOf(find(objects, 'Deployment', 'inv-identity'));
    expect(env.MONGO_URL.valueFrom.secretKeyRef).toEqual({ name: 'invoicing-engines', key: 'mongo-url' });
    expect(env.MINIO_SECRET_KEY.valueFrom.secretKeyRef).toEqual({ name: 'invoicing-minio', key: 'secret-key' });
    expect(env.JWT_SECRET.valueFrom.secretKeyRef).toEqual({ name: 'invoicing-signing', key: 'jwtSecret' });
    expect(envOf(find(objects, 'Deployment', 'inv-rendering')).SMTP_URL.valueFrom.secretKeyRef).toEqual({ name: 'invoicing-smtp', key: 'url' });
    expect(find(objects, 'Secret', 'inv-secrets').data ?? {}).toEqual({});
  });

  it('a changed setting or secret rolls the pods (checksum annotations)', () => {
    const checksums = (args: string[]) => find(render('inv', ['-f', ci('minimal'), ...args]), 'Deployment', 'inv-identity').spec.template.metadata.annotations;
    const base = checksums([]);
    expect(checksums(['--set', 'logLevel=debug'])['checksum/config']).not.toBe(base['checksum/config']);
    const a = checksums(['--set', 'secrets.jwtSecret=' + 'a'.repeat(40), '--set', 'secrets.cursorSecret=' + 'c'.repeat(40), '--set', 'secrets.urlSecret=' + 'u'.repeat(40)]);
    const b = checksums(['--set', 'secrets.jwtSecret=' + 'b'.repeat(40), '--set', 'secrets.cursorSecret=' + 'c'.repeat(40), '--set', 'secrets.urlSecret=' + 'u'.repeat(40)]);
    expect(a['checksum/secrets']).not.toBe(b['checksum/secrets']);
  });
});

describe('pods', () => {
  it.each(['minimal', 'production'])('are hardened (%s): non-root, read-only root with an emptyDir /tmp, no capability, seccomp, no token', (set) => {
    for (const { owner, spec } of podSpecs(render('inv', ['-f', ci(set)]))) {
      expect({ owner, automount: spec.automountServiceAccountToken }).toEqual({ owner, automount: false });
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      const tmp = spec.volumes.find((v: { name: string }) => v.name === 'tmp');
      expect(tmp.emptyDir).toBeDefined();
      for (const c of spec.containers) {
        expect({ owner, sc: c.securityContext }).toMatchObject({
          owner,
          sc: { runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
        });
        expect(c.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
      }
    }
  });

  it('every long-running process has a startupProbe separate from liveness; gRPC services are probed on the plaintext health-only port', () => {
    const objects = render('inv', ['-f', ci('minimal')]);
    for (const name of SERVICES) {
      const c = find(objects, 'Deployment', `inv-${name}`).spec.template.spec.containers[0];
      expect(c.startupProbe).toBeDefined();
      expect(c.startupProbe.failureThreshold * c.startupProbe.periodSeconds).toBeGreaterThan(c.livenessProbe.failureThreshold * c.livenessProbe.periodSeconds);
      for (const probe of [c.startupProbe, c.readinessProbe, c.livenessProbe]) expect(probe.grpc).toEqual({ port: 50053 });
      expect(c.env).toContainEqual({ name: 'GRPC_HEALTH_PORT', value: '50053' });
    }
    const gateway = find(objects, 'Deployment', 'inv-gateway').spec.template.spec.containers[0];
    expect(gateway.startupProbe.httpGet.path).toBe('/healthz');
    expect(gateway.readinessProbe.httpGet.path).toBe('/readyz');
  });

  it('the gateway drains: preStop keeps it serving, SHUTDOWN_DRAIN_MS fails readiness first, the grace period covers both and in-flight work', () => {
    const objects = render('inv', ['-f', ci('minimal')]);
    const pod = find(objects, 'Deployment', 'inv-gateway').spec.template.spec;
    expect(pod.containers[0].lifecycle.preStop.exec.command).toEqual(['sleep', '5']);
    expect(find(objects, 'ConfigMap', 'inv-config').data!.SHUTDOWN_DRAIN_MS).toBe('5000');
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(5 + 5 + 20);
    expect(renderFailure(['-f', ci('minimal'), '--set', 'gateway.terminationGracePeriodSeconds=10']).stderr).toMatch(/terminationGracePeriodSeconds/);
  });

  it('peers are dialled through the headless Services (client-side round_robin), every address the code reads is given', () => {
    const objects = render('inv', ['-f', ci('minimal')]);
    const gateway = envOf(find(objects, 'Deployment', 'inv-gateway'));
    const read = (file: string) => [...readFileSync(path.join(root, file), 'utf8').matchAll(/'([A-Z]+_ADDR)'/g)].map((m) => m[1]);
    for (const address of read('gateway/runtime.ts')) expect(gateway[address].value).toMatch(/^dns:\/\/\/inv-[a-z]+-headless\.billing\.svc\.cluster\.local:50051$/);
    for (const name of SERVICES) expect(gateway[`${name.toUpperCase()}_ADDR`].value).toBe(`dns:///inv-${name}-headless.billing.svc.cluster.local:50051`);
    expect(Object.keys(envOf(find(objects, 'Deployment', 'inv-documents'))).filter((n) => n.endsWith('_ADDR')).sort()).toEqual(['CONTACTS_ADDR', 'IDENTITY_ADDR']);
    expect(Object.keys(envOf(find(objects, 'Deployment', 'inv-rendering'))).filter((n) => n.endsWith('_ADDR')).sort()).toEqual(['DOCUMENTS_ADDR', 'IDENTITY_ADDR']);
    const admin = envOf(find(objects, 'Deployment', 'inv-admin'));
    expect(admin.IDENTITY_ADMIN_ADDR.value).toBe('dns:///inv-identity-headless.billing.svc.cluster.local:50052');
    expect(admin.DOCUMENTS_ADMIN_ADDR.value).toBe('dns:///inv-documents-headless.billing.svc.cluster.local:50052');
    expect(admin.CONTACTS_ADDR.value).toBe('dns:///inv-contacts-headless.billing.svc.cluster.local:50051');
    for (const name of ['identity', 'documents']) expect(envOf(find(objects, 'Deployment', `inv-${name}`)).ADMIN_GRPC_PORT.value).toBe('50052');
    expect(envOf(find(objects, 'Deployment', 'inv-contacts')).ADMIN_GRPC_PORT).toBeUndefined();
  });

  it.each(SERVICES.filter((name) => existsSync(path.join(root, 'services', name, 'module.ts'))))(
    'the %s service is given the address of every peer its module dials (and the NetworkPolicies let it through)',
    (name) => {
      const objects = render('inv', ['-f', ci('minimal')]);
      const dialled = [...new Set([...readFileSync(path.join(root, 'services', name, 'module.ts'), 'utf8').matchAll(/peers\.([a-z]+)/g)].map((m) => m[1]))];
      const env = envOf(find(objects, 'Deployment', `inv-${name}`));
      const egress = find(objects, 'NetworkPolicy', `inv-${name}`).spec.egress.flatMap(
        (rule: { to?: Array<{ podSelector?: { matchExpressions?: Array<{ values: string[] }> } }> }) => rule.to?.flatMap((t) => t.podSelector?.matchExpressions?.[0].values ?? []) ?? [],
      );
      for (const peer of dialled) {
        expect(env[`${peer.toUpperCase()}_ADDR`]?.value).toBe(`dns:///inv-${peer}-headless.billing.svc.cluster.local:50051`);
        expect(egress).toContain(peer);
      }
    },
  );

  it('autoscaling renders an HPA per component and leaves replicas to it (production set)', () => {
    const objects = render('inv', ['-f', ci('production')]);
    for (const name of ['gateway', ...SERVICES]) {
      expect(find(objects, 'HorizontalPodAutoscaler', `inv-${name}`).spec.scaleTargetRef.name).toBe(`inv-${name}`);
      expect(find(objects, 'Deployment', `inv-${name}`).spec.replicas).toBeUndefined();
    }
  });
});

describe('internal network', () => {
  it('generated certificates: one per component, signed by the release CA, valid for its headless Service name, ca.crt alongside', () => {
    const objects = render('inv', ['-f', ci('minimal')]);
    const ca = new X509Certificate(Buffer.from(find(objects, 'Secret', 'inv-tls-ca').data!['tls.crt'], 'base64'));
    for (const name of ['gateway', 'admin', ...SERVICES]) {
      const secret = find(objects, 'Secret', `inv-${name}-tls`);
      const cert = new X509Certificate(Buffer.from(secret.data!['tls.crt'], 'base64'));
      expect(cert.verify(ca.publicKey)).toBe(true);
      // The mesh's identity of a peer is the bare component name (CN and DNS SAN); the Service names follow.
      expect(cert.subject).toContain(`CN=${name}`);
      expect(cert.subjectAltName!.split(', ')).toEqual(expect.arrayContaining([`DNS:${name}`, `DNS:inv-${name}-headless.billing.svc.cluster.local`]));
      expect(secret.data!['ca.crt']).toBe(find(objects, 'Secret', 'inv-tls-ca').data!['tls.crt']);
      const mounted = find(objects, 'Deployment', `inv-${name}`).spec.template.spec.volumes.find((v: { name: string }) => v.name === 'tls');
      expect(mounted.secret.secretName).toBe(`inv-${name}-tls`);
    }
  });

  it('cert-manager: a Certificate per component into the same Secret names, from the given issuer', () => {
    const objects = render('inv', ['-f', ci('production')]);
    for (const name of ['gateway', 'admin', ...SERVICES]) {
      const cert = find(objects, 'Certificate', `inv-${name}-tls`);
      expect(cert.spec).toMatchObject({ secretName: `inv-${name}-tls`, commonName: name, issuerRef: { name: 'internal-ca', kind: 'ClusterIssuer' } });
      expect(cert.spec.dnsNames[0]).toBe(name);
      expect(cert.spec.usages).toEqual(expect.arrayContaining(['server auth', 'client auth']));
    }
    expect(objects.filter((o) => o.kind === 'Secret' && o.metadata.name.endsWith('-tls'))).toEqual([]);
  });

  it('NetworkPolicies admit only the real callers (the caller lists of the mesh); the admin ports only from the admin pod', () => {
    const objects = render('inv', ['-f', ci('minimal')]);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const admitted = (name: string, port: string) => {
      const rules = find(objects, 'NetworkPolicy', `inv-${name}`).spec.ingress.filter((r: { ports: Array<{ port: string }> }) => r.ports.some((p) => p.port === port));
      return rules.flatMap((r: { from: Array<{ podSelector: { matchLabels: Record<string, string>; matchExpressions?: Array<{ values: string[] }> } }> }) =>
        r.from.flatMap((f) => f.podSelector.matchExpressions?.[0].values ?? [f.podSelector.matchLabels['app.kubernetes.io/component']]),
      );
    };
    expect(admitted('identity', 'grpc').sort()).toEqual(['documents', 'expenses', 'gateway', 'rendering']);
    expect(admitted('documents', 'grpc').sort()).toEqual(['expenses', 'gateway', 'rendering']);
    expect(admitted('contacts', 'grpc').sort()).toEqual(['admin', 'documents', 'expenses', 'gateway']);
    expect(admitted('rendering', 'grpc')).toEqual(['gateway']);
    expect(admitted('expenses', 'grpc')).toEqual(['gateway']);
    for (const name of ['identity', 'documents']) expect(admitted(name, 'grpc-admin')).toEqual(['admin']);
    for (const name of ['contacts', 'rendering', 'expenses']) expect(admitted(name, 'grpc-admin')).toEqual([]);
    for (const o of objects.filter((x) => x.kind === 'NetworkPolicy')) expect(o.spec.policyTypes).toEqual(['Ingress', 'Egress']);
  });

  it('gRPC servers bind 0.0.0.0 in plaintext only when tls.enabled=false says so (GRPC_INSECURE_ALLOW_PLAINTEXT_NETWORK)', () => {
    const consent = (objects: K8s[], name: string) => envOf(find(objects, 'Deployment', `inv-${name}`)).GRPC_INSECURE_ALLOW_PLAINTEXT_NETWORK;
    const mtls = render('inv', ['-f', ci('minimal')]);
    const plaintext = render('inv', ['-f', ci('minimal'), '--set', 'tls.enabled=false']);
    for (const name of SERVICES) {
      expect(envOf(find(mtls, 'Deployment', `inv-${name}`)).GRPC_TLS_DIR).toBeDefined();
      expect(consent(mtls, name)).toBeUndefined();
      expect(consent(plaintext, name)).toEqual({ name: 'GRPC_INSECURE_ALLOW_PLAINTEXT_NETWORK', value: 'i-understand' });
    }
  });
});

describe('init Job, Ingress, ServiceMonitor', () => {
  it('the init Job is a pre-install/pre-upgrade hook creating topics with the partitions and replication of the values', () => {
    const objects = render('inv', ['-f', ci('production')]);
    const job = find(objects, 'Job', 'inv-init');
    expect(job.metadata.annotations!['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    const env = envOf(job);
    expect(env.INIT_KAFKA_PARTITIONS.value).toBe('12');
    expect(env.INIT_KAFKA_REPLICATION_FACTOR.value).toBe('3');
    expect(env.KAFKA_TOPIC_PREFIX.value).toBe('prod.');
    expect(job.spec.template.spec.containers[0].command).toEqual(['node', 'dist/deploy/init/main.js']);
  });

  it('an Ingress to the gateway and a ServiceMonitor scraping every metrics port (production set)', () => {
    const objects = render('inv', ['-f', ci('production')]);
    expect(find(objects, 'Ingress', 'inv-gateway').spec.rules[0].http.paths[0].backend.service).toEqual({ name: 'inv-gateway', port: { name: 'http' } });
    expect(find(objects, 'ServiceMonitor', 'inv-invoicing').spec.endpoints[0]).toMatchObject({ port: 'metrics', path: '/metrics' });
    expect(find(objects, 'Service', 'inv-gateway').spec.ports.map((p: { name: string }) => p.name)).toEqual(['http']);
  });
});

/**
 * Least privilege (docs/operations.md "Secrets per workload"): the credentials each workload is given, read
 * from the code — only identity signs sessions (the gateway asks identity, it verifies none itself); every
 * service paginates (CURSOR_SECRET); identity (logos), rendering (PDFs) and expenses (files) use blobs; the
 * init Job creates the bucket; the gateway alone keeps edge state in Redis; rendering alone sends mail.
 */
const GIVEN: Record<string, string[]> = {
  gateway: ['REDIS_URL', 'KAFKA_BROKERS'],
  identity: ['MONGO_URL', 'KAFKA_BROKERS', 'MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY', 'JWT_SECRET', 'CURSOR_SECRET'],
  contacts: ['MONGO_URL', 'KAFKA_BROKERS', 'CURSOR_SECRET'],
  documents: ['MONGO_URL', 'KAFKA_BROKERS', 'CURSOR_SECRET'],
  rendering: ['MONGO_URL', 'KAFKA_BROKERS', 'MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY', 'SMTP_URL', 'CURSOR_SECRET'],
  expenses: ['MONGO_URL', 'KAFKA_BROKERS', 'MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY', 'CURSOR_SECRET'],
  admin: [],
  init: ['MONGO_URL', 'KAFKA_BROKERS', 'MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY'],
};
const WITH_SMTP = ['--set', 'engines.smtp.url=smtp://relay.example.com:587', '--set-json', 'networkPolicy.egress.smtp.to=[{"ipBlock":{"cidr":"198.51.100.25/32"}}]'];
/** The credentials a workload's pods receive, whatever the source (secretKeyRef env, a whole Secret by envFrom, a mounted Secret). */
const credentialsOf = (o: K8s) => {
  const spec = o.spec.template.spec;
  const fromEnv = spec.containers.flatMap((c: { env?: Array<{ name: string; valueFrom?: { secretKeyRef?: unknown } }> }) =>
    (c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name),
  );
  const wholeSecrets = spec.containers.flatMap((c: { envFrom?: Array<{ secretRef?: { name: string } }> }) => (c.envFrom ?? []).filter((e) => e.secretRef).map((e) => `envFrom ${e.secretRef!.name}`));
  const mounted = (spec.volumes ?? []).filter((v: { name: string; secret?: unknown }) => v.secret && v.name !== 'tls').map((v: { name: string }) => `volume ${v.name}`);
  return [...fromEnv, ...wholeSecrets, ...mounted].sort();
};
const workloadName = (o: K8s) => o.metadata.name.replace(/^inv-/, '');

describe('least privilege: each workload gets only the secrets it uses', () => {
  it.each([
    ['minimal', WITH_SMTP],
    ['production', []],
  ])('every Deployment and the init Job receive exactly their credentials (%s)', (set, extra) => {
    const objects = render('inv', ['-f', ci(set), ...extra]);
    const workloads = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job');
    expect(workloads.map(workloadName).sort()).toEqual(Object.keys(GIVEN).sort());
    for (const o of workloads) expect({ workload: workloadName(o), given: credentialsOf(o) }).toEqual({ workload: workloadName(o), given: [...GIVEN[workloadName(o)]].sort() });
  });

  it('JWT_SECRET reaches only identity, the one workload that signs sessions; no workload receives URL_SECRET', () => {
    for (const set of ['minimal', 'production']) {
      const workloads = render('inv', ['-f', ci(set)]).filter((o) => o.kind === 'Deployment' || o.kind === 'Job');
      expect(workloads.filter((o) => credentialsOf(o).includes('JWT_SECRET')).map(workloadName)).toEqual(['identity']);
      expect(workloads.filter((o) => credentialsOf(o).includes('URL_SECRET'))).toEqual([]);
    }
  });

  it("the table is the code's: each service module's declared needs (checked against its code in secrets.test.ts)", () => {
    const ENV = { jwtSecret: 'JWT_SECRET', cursorSecret: 'CURSOR_SECRET', urlSecret: 'URL_SECRET' } as const;
    for (const module of serviceModules) {
      const declared = [...module.needs.secrets.map((n) => ENV[n]), ...(module.needs.blobs ? ['MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY'] : [])];
      const given = GIVEN[module.name].filter((n) => n.endsWith('_SECRET') || n.startsWith('MINIO_'));
      expect({ service: module.name, given: given.sort() }).toEqual({ service: module.name, given: declared.sort() });
    }
  });

  it("MinIO's address travels with its keys, to the blob users only, never through the shared ConfigMap", () => {
    const objects = render('inv', ['-f', ci('minimal')]);
    expect(Object.keys(find(objects, 'ConfigMap', 'inv-config').data!).filter((k) => k.startsWith('MINIO_'))).toEqual([]);
    const withEndpoint = objects.filter((o) => (o.kind === 'Deployment' || o.kind === 'Job') && envOf(o).MINIO_ENDPOINT).map(workloadName);
    expect(withEndpoint.sort()).toEqual(['expenses', 'identity', 'init', 'rendering']);
    expect(envOf(find(objects, 'Deployment', 'inv-expenses')).MINIO_ENDPOINT.value).toBe('minio');
  });
});

const COMPONENTS = ['gateway', 'identity', 'contacts', 'documents', 'rendering', 'expenses', 'admin'];
const EXISTING_CERTS = COMPONENTS.flatMap((c) => ['--set', `tls.existingSecrets.${c}=mesh-${c}`]);

describe('certificates: one per component, also from existing Secrets', () => {
  it('tls.existingSecrets: each workload mounts its own Secret, and nothing is generated', () => {
    const objects = render('inv', ['-f', ci('existing-certificates')]);
    for (const name of COMPONENTS) {
      const volume = find(objects, 'Deployment', `inv-${name}`).spec.template.spec.volumes.find((v: { name: string }) => v.name === 'tls');
      expect({ name, secret: volume.secret.secretName }).toEqual({ name, secret: `mesh-${name}` });
    }
    expect(objects.filter((o) => o.kind === 'Secret' && /tls/.test(o.metadata.name))).toEqual([]);
  });

  it('refuses the single certificate every component would share (tls.existingSecret), naming the migration', () => {
    const run = renderFailure(['-f', ci('minimal'), '--set', 'tls.existingSecret=mesh']);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/tls\.existingSecret \(one certificate for every component\) is no longer accepted.*tls\.existingSecrets\.<component>/);
  });

  it('refuses existing Secrets for only some components, one Secret for two components, and mixing with cert-manager', () => {
    const without = (component: string) => EXISTING_CERTS.filter((a, i) => !(a.includes(`.${component}=`) || EXISTING_CERTS[i + 1]?.includes(`.${component}=`)));
    expect(renderFailure(['-f', ci('minimal'), ...without('expenses')]).stderr).toMatch(/tls\.existingSecrets\.expenses is required/);
    expect(renderFailure(['-f', ci('minimal'), ...EXISTING_CERTS, '--set', 'tls.existingSecrets.expenses=mesh-gateway']).stderr).toMatch(/gateway and expenses name the same Secret "mesh-gateway"/);
    expect(renderFailure(['-f', ci('minimal'), ...EXISTING_CERTS, '--set', 'tls.certManager.enabled=true']).stderr).toMatch(/exclusive/);
    // Without the admin pod no admin certificate is asked for.
    expect(renderFailure(['-f', ci('minimal'), ...without('admin'), '--set', 'admin.enabled=false']).status).toBe(0);
  });
});

/** What an egress peer names: `dns`, a component of the release (`admin:` prefix on the admin port), an engine's label, or a CIDR. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const destinationsOf = (policy: K8s): string[] =>
  policy.spec.egress.flatMap((rule: { ports: Array<{ port: number | string }>; to: any[] }) =>
    rule.to.flatMap((peer) => {
      if (peer.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns') return ['dns'];
      const components: string[] | undefined = peer.podSelector?.matchExpressions?.[0].values;
      if (components) return components.map((c) => (rule.ports.some((p) => p.port === 'grpc-admin') ? `admin:${c}` : c));
      if (peer.ipBlock) return [peer.ipBlock.cidr];
      return [peer.podSelector?.matchLabels?.['app.kubernetes.io/name'] ?? JSON.stringify(peer)];
    }),
  );

describe('NetworkPolicies: egress denied but to explicit destinations', () => {
  it.each(['minimal', 'production', 'existing-certificates'])('every policy has an egress section whose every rule names its destinations, none of them open (%s)', (set) => {
    const policies = render('inv', ['-f', ci(set)]).filter((o) => o.kind === 'NetworkPolicy');
    expect(policies.map(workloadName).sort()).toEqual([...COMPONENTS, 'init'].sort());
    for (const policy of policies) {
      expect(policy.spec.policyTypes).toContain('Egress');
      expect(policy.spec.egress.length).toBeGreaterThan(0);
      for (const rule of policy.spec.egress) {
        expect({ policy: policy.metadata.name, to: Array.isArray(rule.to) && rule.to.length > 0 }).toEqual({ policy: policy.metadata.name, to: true });
        expect({ policy: policy.metadata.name, ports: Array.isArray(rule.ports) && rule.ports.length > 0 }).toEqual({ policy: policy.metadata.name, ports: true });
      }
      expect(destinationsOf(policy).filter((d) => /^(0\.0\.0\.0|::)\/0$/.test(d))).toEqual([]);
    }
  });

  it("each component's policy allows exactly DNS, the peers it dials and its own engines", () => {
    const withOtel = ['--set', 'otel.enabled=true', '--set', 'otel.endpoint=http://collector:4318', '--set-json', 'networkPolicy.egress.otel.to=[{"podSelector":{"matchLabels":{"app.kubernetes.io/name":"otel-collector"}}}]'];
    const objects = render('inv', ['-f', ci('minimal'), ...WITH_SMTP, ...withOtel]);
    const allowed = (name: string) => destinationsOf(find(objects, 'NetworkPolicy', `inv-${name}`)).sort();
    const sorted = (xs: string[]) => [...xs].sort();
    expect(allowed('gateway')).toEqual(sorted(['dns', 'identity', 'contacts', 'documents', 'rendering', 'expenses', 'redis', 'kafka', 'otel-collector']));
    expect(allowed('identity')).toEqual(sorted(['dns', 'mongodb', 'kafka', 'minio', 'otel-collector']));
    expect(allowed('contacts')).toEqual(sorted(['dns', 'mongodb', 'kafka', 'otel-collector']));
    expect(allowed('documents')).toEqual(sorted(['dns', 'identity', 'contacts', 'mongodb', 'kafka', 'otel-collector']));
    expect(allowed('rendering')).toEqual(sorted(['dns', 'identity', 'documents', 'mongodb', 'kafka', 'minio', '198.51.100.25/32', 'otel-collector']));
    expect(allowed('expenses')).toEqual(sorted(['dns', 'identity', 'contacts', 'documents', 'mongodb', 'kafka', 'minio', 'otel-collector']));
    expect(allowed('admin')).toEqual(sorted(['dns', 'admin:identity', 'admin:documents', 'contacts']));
    expect(allowed('init')).toEqual(sorted(['dns', 'mongodb', 'kafka', 'minio']));
  });

  it("an engine's rule opens only that engine's ports, from networkPolicy.egress.<engine>.ports", () => {
    const policy = find(render('inv', ['-f', ci('production')]), 'NetworkPolicy', 'inv-rendering');
    const portsTo = (cidrOrName: string) =>
      policy.spec.egress
        .filter((rule: { to: Array<{ ipBlock?: { cidr: string }; namespaceSelector?: { matchLabels: Record<string, string> } }> }) =>
          rule.to.some((p) => p.ipBlock?.cidr === cidrOrName || p.namespaceSelector?.matchLabels['kubernetes.io/metadata.name'] === cidrOrName),
        )
        .flatMap((rule: { ports: Array<{ port: number }> }) => rule.ports.map((p) => p.port));
    expect(portsTo('10.20.0.0/24')).toEqual([27017]);
    expect(portsTo('10.20.1.0/24')).toEqual([9092, 9094]);
    expect(portsTo('198.51.100.25/32')).toEqual([587]);
    expect(portsTo('storage')).toEqual([9000]);
    expect(portsTo('10.20.2.16/28')).toEqual([]); // Redis is the gateway's alone
  });

  it('an engine in use without a destination fails the render naming the value; an open destination only when a value says so', () => {
    const run = renderFailure(['-f', ci('minimal'), '--set-json', 'networkPolicy.egress.kafka.to=[]']);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/networkPolicy\.egress\.kafka\.to is required: where gateway reaches kafka/);
    expect(renderFailure(['-f', ci('minimal'), '--set-json', 'networkPolicy.dnsTo=[]']).stderr).toMatch(/networkPolicy\.dnsTo is required/);
    // SMTP configured without a destination for it: refused as well (rendering is its only user).
    expect(renderFailure(['-f', ci('minimal'), '--set', 'engines.smtp.url=smtp://relay:587']).stderr).toMatch(/networkPolicy\.egress\.smtp\.to is required: where rendering reaches smtp/);
    const open = render('inv', ['-f', ci('minimal'), '--set-json', 'networkPolicy.egress.minio.to=[{"ipBlock":{"cidr":"0.0.0.0/0"}}]']).filter((o) => o.kind === 'NetworkPolicy');
    expect(open.filter((p) => destinationsOf(p).includes('0.0.0.0/0')).map(workloadName).sort()).toEqual(['expenses', 'identity', 'init', 'rendering']);
  });
});

describe('every value is documented', () => {
  it('each top-level key of values.yaml is documented in docs/operations.md', () => {
    const values = readFileSync(path.join(chart, 'values.yaml'), 'utf8');
    const doc = readFileSync(path.join(root, 'docs/operations.md'), 'utf8');
    const keys: string[] = [];
    const stack: Array<{ indent: number; key: string }> = [];
    for (const line of values.split('\n')) {
      const m = /^( *)([A-Za-z][A-Za-z0-9]*):/.exec(line);
      if (!m) continue;
      const indent = m[1].length;
      while (stack.length && stack[stack.length - 1].indent >= indent) stack.pop();
      stack.push({ indent, key: m[2] });
      keys.push(stack.map((s) => s.key).join('.'));
    }
    const topLevel = keys.filter((k) => !k.includes('.'));
    expect(topLevel.length).toBeGreaterThan(20);
    for (const key of topLevel) expect({ key, documented: doc.includes('`' + key) }).toEqual({ key, documented: true });
  });
});

describe('deploy/Dockerfile', () => {
  const dockerfile = readFileSync(path.join(root, 'deploy/Dockerfile'), 'utf8');
  const stages = [...dockerfile.matchAll(/^FROM (\S+)(?: AS (\S+))?$/gm)].map((m) => ({ from: m[1], name: m[2] }));

  it('every package the runtime code imports is a production dependency (the image prunes devDependencies)', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const builtins = new Set(require('node:module').builtinModules as string[]);
    const missing = new Set<string>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (file.endsWith('.ts')) {
          for (const m of readFileSync(file, 'utf8').matchAll(/(?:from |import\(|require\()'([^.'][^']*)'/g)) {
            if (m[1].startsWith('node:')) continue;
            const name = m[1].startsWith('@') ? m[1].split('/').slice(0, 2).join('/') : m[1].split('/')[0];
            if (!builtins.has(name) && !(name in pkg.dependencies)) missing.add(`${name} (${path.relative(root, file)})`);
          }
        }
      }
    };
    for (const dir of ['services', 'gateway', 'deploy']) walk(path.join(root, dir));
    expect([...missing]).toEqual([]);
  });

  it('has a service, a rendering and an expenses target on a supported Node LTS', () => {
    expect(stages.map((s) => s.name)).toEqual(expect.arrayContaining(['service', 'rendering', 'expenses']));
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:(22|24)-[a-z]+-slim$/m);
  });

  it('each runtime target ends as a non-root user; Chromium only in rendering; OCR data only in expenses; no test code, no better-sqlite3', () => {
    const section = (name: string) => dockerfile.split(/^FROM /m).find((s) => new RegExp(`AS ${name}$`, 'm').test(s.split('\n')[0]))!;
    for (const name of ['service', 'rendering', 'expenses']) {
      const users = [...section(name).matchAll(/^USER (\S+)/gm)].map((m) => m[1]);
      expect({ name, last: users[users.length - 1] }).toEqual({ name, last: '1000:1000' });
    }
    expect(section('service')).not.toMatch(/chromium/);
    expect(section('rendering')).toMatch(/chromium fonts-dejavu-core/);
    expect(section('deps')).toMatch(/rm -rf node_modules\/better-sqlite3/);
    expect(section('deps')).toMatch(/mv node_modules\/@tesseract\.js-data/);
    expect(section('expenses')).toMatch(/@tesseract\.js-data/);
    expect(dockerfile).not.toMatch(/COPY test/);
    const ignore = readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n');
    expect(ignore).toEqual(expect.arrayContaining(['test', 'node_modules', '.git', 'dist']));
  });
});
