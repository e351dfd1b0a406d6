/** The route index made from the contract table at build time (vite.config.mts, `routeIndexPlugin`). */
declare module 'virtual:switchyard/routes' {
  const index: Readonly<Record<string, import('@switchyard/contracts').RouteRef>>;
  export default index;
}
