import { startEarlyReads } from './api/early';

// main.tsx imports this module first, so it runs before the rest of the bundle evaluates: the
// page's first reads travel while React, the router and the contract schemas are being set up.
startEarlyReads(location.pathname);
