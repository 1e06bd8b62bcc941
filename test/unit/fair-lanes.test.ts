// The fair-sharing bookkeeping (services/shared/fair-lanes.ts, docs/rendering.md "Fair sharing of the
// renderer"): lanes taken in turn, least recently served first; a per-lane cap; per-lane and total
// queue bounds refused at once; background items only when no urgent item may start.
import { FairLanes } from '../../services/shared/fair-lanes';

interface Item {
  name: string;
  background?: boolean;
}
const lanes = (limits: Partial<ConstructorParameters<typeof FairLanes>[0]> = {}) =>
  new FairLanes<Item>({ laneConcurrency: 1, laneQueueMax: 100, queueMax: 100, ...limits }, (item) => item.background === true);
const item = (name: string, background = false): Item => ({ name, background });

/** Starts waiting items one at a time, each ending before the next starts: the order of service. */
function serveAll(fair: FairLanes<Item>): string[] {
  const order: string[] = [];
  for (let next = fair.next(); next; next = fair.next()) {
    order.push(next.item.name);
    fair.done(next.lane);
  }
  return order;
}

describe('FairLanes: turn order', () => {
  it("a newcomer's first item is started before the rest of another lane's backlog", () => {
    const fair = lanes();
    expect(fair.offer('a', item('a1'), true)).toBe('start');
    for (let i = 2; i <= 20; i++) expect(fair.offer('a', item(`a${i}`), false)).toBe('queued');
    expect(fair.offer('b', item('b1'), false)).toBe('queued');
    fair.done('a');
    expect(fair.next()?.item.name).toBe('b1');
  });

  it('lanes with backlogs alternate, least recently served first', () => {
    const fair = lanes();
    for (const name of ['a1', 'a2', 'a3']) fair.offer('a', item(name), false);
    for (const name of ['b1', 'b2', 'b3']) fair.offer('b', item(name), false);
    fair.offer('c', item('c1'), false);
    expect(serveAll(fair)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'b3']);
  });

  it("a lane's own items keep their order", () => {
    const fair = lanes();
    for (const name of ['a1', 'a2', 'a3']) fair.offer('a', item(name), false);
    expect(serveAll(fair)).toEqual(['a1', 'a2', 'a3']);
  });
});

describe('FairLanes: per-lane cap', () => {
  it('a lane at its cap waits even when a worker is free; another lane starts at once', () => {
    const fair = lanes({ laneConcurrency: 2 });
    expect(fair.offer('a', item('a1'), true)).toBe('start');
    expect(fair.offer('a', item('a2'), true)).toBe('start');
    expect(fair.offer('a', item('a3'), true)).toBe('queued');
    expect(fair.next()).toBeUndefined();
    expect(fair.offer('b', item('b1'), true)).toBe('start');
    expect({ running: fair.running('a'), waiting: fair.waiting('a') }).toEqual({ running: 2, waiting: 1 });
    fair.done('a');
    expect(fair.next()?.item.name).toBe('a3');
  });
});

describe('FairLanes: queue bounds', () => {
  it('a full lane is refused at once; other lanes still queue', () => {
    const fair = lanes({ laneQueueMax: 2 });
    fair.offer('a', item('a1'), true);
    expect(fair.offer('a', item('a2'), false)).toBe('queued');
    expect(fair.offer('a', item('a3'), false)).toBe('queued');
    expect(fair.offer('a', item('a4'), false)).toBe('lane_full');
    expect(fair.offer('b', item('b1'), false)).toBe('queued');
    expect(fair.waiting()).toBe(3);
  });

  it('a full queue (all lanes together) is refused at once', () => {
    const fair = lanes({ laneQueueMax: 2, queueMax: 3 });
    for (const name of ['a1', 'a2']) fair.offer('a', item(name), false);
    fair.offer('b', item('b1'), false);
    expect(fair.offer('c', item('c1'), false)).toBe('full');
    // A refused newcomer leaves nothing behind.
    expect(fair.waiting('c')).toBe(0);
    expect(serveAll(fair)).toEqual(['a1', 'b1', 'a2']);
  });

  it('a withdrawn item is gone from its lane and its turn', () => {
    const fair = lanes();
    const a2 = item('a2');
    fair.offer('a', item('a1'), false);
    fair.offer('a', a2, false);
    expect(fair.withdraw('a', a2)).toBe(true);
    expect(fair.withdraw('a', a2)).toBe(false);
    expect(serveAll(fair)).toEqual(['a1']);
  });

  it('done without a running item is a bug, reported', () => {
    expect(() => lanes().done('a')).toThrow(/nothing of lane a is running/);
  });
});

describe('FairLanes: background items yield', () => {
  it('a background item starts only when no urgent item of any lane may start', () => {
    const fair = lanes();
    fair.offer('p', item('p1', true), false);
    fair.offer('a', item('a1'), false);
    fair.offer('a', item('a2'), false);
    fair.offer('p', item('p2'), false);
    // p2 is urgent and its lane never served: first; then every urgent item; the pre-render last.
    expect(serveAll(fair)).toEqual(['p2', 'a1', 'a2', 'p1']);
  });

  it('an item made urgent while it waits is taken as urgent', () => {
    const fair = lanes();
    fair.offer('a', item('a0'), true);
    const p1 = item('p1', true);
    fair.offer('p', p1, false);
    fair.offer('a', item('a1'), false);
    p1.background = false;
    fair.done('a');
    expect(serveAll(fair)).toEqual(['p1', 'a1']);
  });
});
