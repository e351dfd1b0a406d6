import { routeIndexOf, Routes } from '@switchyard/contracts';

// What `virtual:switchyard/routes` holds in the built console, for the component tests (jest maps
// the virtual module here): the same function over the same table.
export default routeIndexOf(Routes);
