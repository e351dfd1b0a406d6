// e2e setup: a stack whose start outlived its hook's timeout is held by no suite variable, so its
// afterAll cannot stop it, and its services would load the machine for every later file. Stop them.
'use strict';
const { stopLeftoverServices } = require('@switchyard/testing');

afterAll(async () => {
  const stopped = await stopLeftoverServices();
  if (stopped > 0) console.warn(`stopped ${stopped} service process(es) this file's stacks left running`);
});
