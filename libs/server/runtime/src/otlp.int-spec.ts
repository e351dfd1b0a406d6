import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Module } from '@nestjs/common';
import { testConfig, uniquePrefix, waitFor } from '@switchyard/testing';
import { bootstrapService } from './bootstrap';

@Module({})
class EmptyModule {}

interface OtlpBody {
  resourceMetrics: Array<{
    resource: { attributes: Array<{ key: string; value: { stringValue: string } }> };
    scopeMetrics: Array<{ metrics: Array<Record<string, unknown> & { name: string }> }>;
  }>;
}

describe('OTLP metrics push (a real service, a local collector)', () => {
  let collector: Server;
  const received: OtlpBody[] = [];

  beforeAll(async () => {
    collector = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        if (req.url === '/v1/metrics' && req.headers['content-type'] === 'application/json')
          received.push(JSON.parse(body) as OtlpBody);
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  });

  afterAll(async () => {
    collector.closeAllConnections();
    await new Promise((r) => collector.close(r));
  });

  it('pushes the Prometheus registry as OTLP JSON while OTEL_EXPORTER_OTLP_ENDPOINT is set, and once more at close', async () => {
    const port = (collector.address() as AddressInfo).port;
    const service = await bootstrapService({
      config: testConfig('planner', {
        NATS_SUBJECT_PREFIX: uniquePrefix(),
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}/`,
        OTEL_METRIC_EXPORT_INTERVAL: '200',
      }),
      modules: [EmptyModule],
      uses: { postgres: false, redis: false },
    });
    // One HTTP request so the request counter and duration histogram have data points.
    await fetch(`${service.url}/healthz`);
    await waitFor(() => received.length >= 2, 60_000, 50);
    await service.close();
    const last = received[received.length - 1] as OtlpBody;
    const rm = last.resourceMetrics[0];
    expect(rm?.resource.attributes).toContainEqual({
      key: 'service.name',
      value: { stringValue: 'switchyard-planner' },
    });
    const metrics = rm?.scopeMetrics[0]?.metrics ?? [];
    const byName = new Map(metrics.map((m) => [m.name, m]));
    const requests = byName.get('switchyard_http_requests_total') as unknown as {
      sum: { isMonotonic: boolean; dataPoints: Array<{ asDouble: number }> };
    };
    expect(requests.sum.isMonotonic).toBe(true);
    expect(requests.sum.dataPoints.reduce((a, p) => a + p.asDouble, 0)).toBeGreaterThanOrEqual(1);
    const duration = byName.get('switchyard_http_duration_seconds') as unknown as {
      histogram: { dataPoints: Array<{ count: string; bucketCounts: string[]; explicitBounds: number[] }> };
    };
    const point = duration.histogram.dataPoints[0];
    expect(point).toBeDefined();
    expect(point?.bucketCounts).toHaveLength((point?.explicitBounds.length ?? 0) + 1);
    expect(point?.bucketCounts.reduce((a, c) => a + Number(c), 0)).toBe(Number(point?.count));
    expect(Number(point?.count)).toBeGreaterThanOrEqual(1);
    expect(byName.get('switchyard_process_resident_memory_bytes')).toHaveProperty('gauge');
  });
});
