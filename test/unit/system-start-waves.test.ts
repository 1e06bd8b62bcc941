// The distributed test systems start their services in waves (test/support/system.ts startWaves): a
// service after the services it calls (ServiceNeeds.peers), the rest together.
import { serviceModules } from '../../deploy/modules';
import { startWaves } from '../support/system';

const mod = (name: string, peers: string[] = []) => ({ name, needs: { peers } });

describe('startWaves', () => {
  it('the real modules: identity and contacts, then documents, then rendering and expenses', () => {
    expect(startWaves(serviceModules).map((wave) => wave.map((m) => m.name))).toEqual([['identity', 'contacts'], ['documents'], ['rendering', 'expenses']]);
  });

  it('every module starts after each peer it calls', () => {
    const waves = startWaves(serviceModules);
    const waveOf = (name: string) => waves.findIndex((wave) => wave.some((m) => m.name === name));
    for (const module of serviceModules) for (const peer of module.needs.peers) expect(waveOf(peer)).toBeLessThan(waveOf(module.name));
  });

  it('a peer that is not among the modules does not hold a module back', () => {
    expect(startWaves([mod('a', ['elsewhere']), mod('b', ['a'])]).map((w) => w.map((m) => m.name))).toEqual([['a'], ['b']]);
  });

  it('services that call each other are refused, not started in a wrong order', () => {
    expect(() => startWaves([mod('a', ['b']), mod('b', ['a'])])).toThrow(/cannot start in waves: a, b/);
  });
});
