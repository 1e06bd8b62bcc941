const { MongoClient } = require('mongodb');
(async () => {
  const c = await MongoClient.connect(process.env.MONGO_URL.replace('/invoicing', '/rtt_probe_issuing'));
  const col = c.db().collection('t');
  await col.deleteMany({});
  await col.insertOne({ _id: 1, v: 0 });
  const time = async (label, n, f) => { const t = Date.now(); for (let i = 0; i < n; i++) await f(i); console.log(label, ((Date.now() - t) / n).toFixed(2), 'ms'); };
  await time('findOne', 100, () => col.findOne({ _id: 1 }));
  await time('replaceOne', 100, (i) => col.replaceOne({ _id: 1, v: i }, { v: i + 1 }));
  await time('insertOne', 100, (i) => col.insertOne({ _id: 1000 + i, x: 'y' }));
  const t = Date.now(); await Promise.all(Array.from({ length: 100 }, (_, i) => col.findOne({ _id: 1000 + i }))); console.log('100 parallel finds', Date.now() - t, 'ms');
  const t2 = Date.now(); await Promise.all(Array.from({ length: 100 }, (_, i) => col.replaceOne({ _id: 1000 + i }, { x: 'z' }))); console.log('100 parallel replaces', Date.now() - t2, 'ms');
  const t3 = Date.now(); await col.bulkWrite(Array.from({ length: 100 }, (_, i) => ({ replaceOne: { filter: { _id: 1000 + i }, replacement: { x: 'w' } } })), { ordered: true }); console.log('bulk 100 replaces', Date.now() - t3, 'ms');
  await c.db().dropDatabase(); await c.close();
})();
