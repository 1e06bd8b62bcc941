const express = require('express');
const http = require('http');
const app = express();
const r = express.Router();
r.get('/accounts/:account_id/invoices/:id/pdf', (req, res) => res.end('PDF ' + JSON.stringify(req.params) + ' url=' + req.url));
app.use('/api/v1', (req,res,next)=>{ next(); }, r);
app.use((req, res) => res.status(404).end('404 ' + req.url));
const srv = http.createServer(app).listen(0, async () => {
  const port = srv.address().port;
  const paths = ['/api/v1/accounts/1/invoices/1/pdf#x', '/api/v1/accounts/1/invoices/1/%70df', '/API/V1/ACCOUNTS/1/INVOICES/1/PDF', '/api/v1/accounts/1/invoices/1/pdf/', '/api/v1//accounts/1/invoices/1/pdf', '/api/v1/accounts//1/invoices/1/pdf', '/api/v1/accounts/1/invoices/1/pdf?x#y', '/api/v1/accounts/1/invoices/1/pdf/#x', '/api/v1/accounts/1/invoices/1/pdf;x', '/api/v1/accounts/1/%69nvoices/1/pdf', '/api/v1/accounts/1/invoices/1/pdf%2F', '/api/%761/accounts/1/invoices/1/pdf', '/api/v1/accounts/1/invoices/1/pdf//', '/api/v1/accounts/1/invoices/1/./pdf', 'http://x/api/v1/accounts/1/invoices/1/pdf'];
  for (const p of paths) {
    await new Promise((resolve) => { const req = http.request({ port, path: p, method: 'HEAD' === process.argv[2] ? 'HEAD' : 'GET' }, (res) => { let b=''; res.on('data', d=>b+=d); res.on('end', ()=>{ console.log(p, '→', res.statusCode, b); resolve(); }); }); req.end(); });
  }
  srv.close();
});
