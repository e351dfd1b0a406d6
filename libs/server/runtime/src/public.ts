import { SetMetadata } from '@nestjs/common';

export const PUBLIC_ROUTE = 'switchyard:public';

/**
 * Opens an HTTP handler outside the API's route table to callers without a token: probes and the
 * API document. The gateway denies every other handler that has no route definition, so a method
 * added without `@Endpoint(Routes.x)` or this mark is closed, not open (apps/gateway's
 * route-guarding.spec.ts lists every handler to prove it).
 */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(PUBLIC_ROUTE, true);
