// The Helm chart deploys every service the code has, and gives every process the peer addresses it
// reads. (No helm binary on the CI machine: the chart's wiring is checked from its sources.)
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { serviceModules } from '../../deploy/modules';

const chart = path.join(__dirname, '../../helm/invoicing');
const templates = readdirSync(path.join(chart, 'templates'));
const helpers = readFileSync(path.join(chart, 'templates/_helpers.tpl'), 'utf8');
const values = readFileSync(path.join(chart, 'values.yaml'), 'utf8');
const source = (file: string) => readFileSync(path.join(__dirname, '../..', file), 'utf8');

/** Every `<NAME>_ADDR` a process reads from its environment. */
const addressesRead = (file: string) => [...source(file).matchAll(/'([A-Z]+_ADDR)'/g)].map((m) => m[1]);

describe('Helm chart', () => {
  it.each(serviceModules.map((m) => m.name))('deploys the %s service: a template, its values, its address for peers', (name) => {
    expect(templates).toContain(`${name}.yaml`);
    expect(readFileSync(path.join(chart, 'templates', `${name}.yaml`), 'utf8')).toContain(`"name" "${name}"`);
    expect(values).toMatch(new RegExp(`^${name}:\\n  replicas: \\d+`, 'm'));
    expect(helpers).toMatch(new RegExp(`peerEnv[\\s\\S]*list[^}]*"${name}"`));
  });

  it('gives the gateway and the services every peer address they read', () => {
    const peers = /define "invoicing.peerEnv"[\s\S]*?list ([^}]*)\}\}/.exec(helpers)![1];
    const provided = [...peers.matchAll(/"([a-z]+)"/g)].map((m) => `${m[1].toUpperCase()}_ADDR`);
    const read = new Set([...addressesRead('gateway/runtime.ts'), ...addressesRead('services/shared/bootstrap.ts')]);
    expect(read.size).toBeGreaterThan(0);
    for (const address of read) expect(provided).toContain(address);
    expect(readFileSync(path.join(chart, 'templates/gateway.yaml'), 'utf8')).toContain('invoicing.peerEnv');
  });
});
