// Writes the OpenAPI document exactly as the gateway serves it (openapi.yaml + resources/*.yaml merged,
// edge policies applied) to one file, for the linters: `node scripts/openapi-served.js <out.json>`.
require('./ts-register');
const { writeFileSync } = require('node:fs');
const { servedOpenApi } = require('../gateway/openapi/document.ts');

const out = process.argv[2];
if (!out) throw new Error('usage: node scripts/openapi-served.js <out.json>');
writeFileSync(out, JSON.stringify(servedOpenApi(), null, 2));
