// Lets a child process run the TypeScript sources directly (`node -r ./tests/support/ts-register.js src/main.ts`).
// Process-level tests (workers, signals) need a real `node` process; this spares them a build. Types are not checked.
const { readFileSync } = require('node:fs');
const { transformSync } = require('@swc/core');

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(readFileSync(filename, 'utf8'), {
    filename,
    sourceMaps: 'inline',
    module: { type: 'commonjs' },
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
  });
  module._compile(code, filename);
};
