// Lets a plain `node` script require the TypeScript sources (no build, no stale dist/): each .ts file is
// compiled to CommonJS with @swc/core (already the test transform) as it is required.
const { transformSync } = require('@swc/core');
const fs = require('node:fs');

require.extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = transformSync(source, {
    filename,
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
