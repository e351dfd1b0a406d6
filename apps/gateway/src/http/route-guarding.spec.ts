import { Controller, Get, type Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import { Routes } from '@switchyard/contracts';
import { loadConfig } from '@switchyard/server-config';
import { Public, PUBLIC_ROUTE, ServiceKitModule } from '@switchyard/server-runtime';
import { GatewayModule } from '../gateway.module';
import { Endpoint, ROUTE_DEF } from './endpoint';

type Access = 'route table' | 'public' | 'unmarked';

/** Every HTTP handler of these controllers, and how the gateway's guard treats it. */
function handlers(controllers: Type[]): Map<string, Access> {
  const found = new Map<string, Access>();
  for (const c of controllers) {
    for (const name of Object.getOwnPropertyNames(c.prototype)) {
      const handler: unknown = Object.getOwnPropertyDescriptor(c.prototype, name)?.value;
      if (typeof handler !== 'function' || name === 'constructor') continue;
      if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      const access: Access = Reflect.getMetadata(ROUTE_DEF, handler)
        ? 'route table'
        : Reflect.getMetadata(PUBLIC_ROUTE, handler) || Reflect.getMetadata(PUBLIC_ROUTE, c)
          ? 'public'
          : 'unmarked';
      found.set(`${c.name}.${name}`, access);
    }
  }
  return found;
}

/** The controllers the gateway really mounts: its own and the service kit's (probes). */
function gatewayControllers(): Type[] {
  const kit = ServiceKitModule.forRoot({
    config: loadConfig('gateway', {}),
    uses: { postgres: true, redis: true },
  });
  const own: unknown = Reflect.getMetadata('controllers', GatewayModule);
  return [...(Array.isArray(own) ? own : []), ...(kit.controllers ?? [])];
}

const withAccess = (all: Map<string, Access>, access: Access) =>
  [...all].filter(([, a]) => a === access).map(([name]) => name);

describe('every gateway handler is in the route table or marked @Public()', () => {
  const all = handlers(gatewayControllers());

  it('finds the handlers (the walk itself works)', () => {
    expect(all.get('IdentityController.me')).toBe('route table');
    expect(withAccess(all, 'route table').length).toBe(Object.keys(Routes).length);
  });

  it('has no unmarked handler: one would answer 404 to everyone (see gateway.int-spec)', () => {
    expect(withAccess(all, 'unmarked')).toEqual([]);
  });

  it('opens only the probes and the API document without a route definition', () => {
    expect(withAccess(all, 'public').sort()).toEqual([
      'DocsController.openapi',
      'ProbesController.alive',
      'ProbesController.ready',
    ]);
  });

  it('does not mount /metrics on the public port', () => {
    expect([...all.keys()].filter((h) => h.startsWith('MetricsController'))).toEqual([]);
  });

  it('would catch a new unmarked method', () => {
    @Controller()
    class Careless {
      @Endpoint(Routes.me)
      me(): void {}

      @Public()
      @Get('open')
      open(): void {}

      @Get('forgotten')
      forgotten(): void {}

      helper(): void {}
    }
    expect(handlers([Careless])).toEqual(
      new Map<string, Access>([
        ['Careless.me', 'route table'],
        ['Careless.open', 'public'],
        ['Careless.forgotten', 'unmarked'],
      ]),
    );
  });
});
