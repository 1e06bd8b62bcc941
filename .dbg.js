const { startSystem } = require('./dist/test/support/system');
const { docsWorkspace, line } = require('./dist/test/support/documents');
(async () => {
  const system = await startSystem({ mode: 'distributed', replicas: { documents: 2 }, env: { LOG_LEVEL: 'info' } });
  try {
    const ws = await docsWorkspace(system);
    const ids = [];
    for (let i = 0; i < 20; i++) ids.push((await ws.api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line()] })).body.id);
    const t = Date.now();
    const rs = await Promise.all(ids.map(async (id) => { const s = Date.now(); const r = await ws.api.post(`${ws.base}/invoices/${id}/issue`); return `${r.status}:${Date.now() - s}`; }));
    console.log(rs.join(' '), 'total', Date.now() - t);
  } finally {
    console.log(system.output().split('\n').filter((l) => l.startsWith('[dbg')).join('\n').slice(0, 6000));
    await system.stop();
  }
})().catch((e) => { console.error(e); process.exit(1); });
