import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { connect, JSONCodec } from 'nats';
import { Rpc, type EchoRequest } from '@switchyard/contracts';
import { loadConfig } from '@switchyard/server-config';
import { bootstrapService, RpcHandler, RpcPayload } from '@switchyard/server-runtime';

/*
 * The two responders of the rpc benchmark, in one process: our stack (Nest handler behind the
 * SwitchyardNatsServer, with the context interceptor, error filter and zod payload validation that
 * every real handler gets) and a raw nats.js subscription doing the same JSON decode/encode.
 */

@Controller()
class EchoHandler {
  @RpcHandler(Rpc.bench.echo)
  echo(@RpcPayload(Rpc.bench.echo) body: EchoRequest): EchoRequest {
    return body;
  }
}

@Module({ controllers: [EchoHandler] })
class EchoModule {}

async function main(): Promise<void> {
  const [natsUrl = 'nats://127.0.0.1:4222', prefix = 'bench.'] = process.argv.slice(2);
  const config = loadConfig('planner', {
    NATS_URL: natsUrl,
    NATS_SUBJECT_PREFIX: prefix,
    PORT: '0',
    LOG_LEVEL: 'warn',
  });
  const service = await bootstrapService({
    config,
    modules: [EchoModule],
    uses: { postgres: false, redis: false },
  });

  const raw = await connect({ servers: natsUrl, name: 'bench-raw-server' });
  const codec = JSONCodec<unknown>();
  raw.subscribe(`${prefix}raw.echo`, {
    queue: 'raw',
    callback: (_err, msg) => msg.respond(codec.encode(codec.decode(msg.data))),
  });
  await raw.flush();
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    void Promise.all([service.close(), raw.drain()]).then(() => process.exit(0));
  });
}

void main();
