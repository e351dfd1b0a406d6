import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One registry per service process: RPC and HTTP request counts and latencies, plus Node defaults. */
export class Metrics {
  readonly registry = new Registry();
  readonly rpcRequests: Counter<'subject' | 'outcome'>;
  readonly rpcDuration: Histogram<'subject'>;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route'>;

  constructor(service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry, prefix: 'switchyard_' });
    this.rpcRequests = new Counter({
      name: 'switchyard_rpc_requests_total',
      help: 'NATS requests handled, by subject and outcome (ok or error code)',
      labelNames: ['subject', 'outcome'],
      registers: [this.registry],
    });
    this.rpcDuration = new Histogram({
      name: 'switchyard_rpc_duration_seconds',
      help: 'Time spent handling a NATS request',
      labelNames: ['subject'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.httpRequests = new Counter({
      name: 'switchyard_http_requests_total',
      help: 'HTTP requests answered, by route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'switchyard_http_duration_seconds',
      help: 'Time spent answering an HTTP request',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
  }

  // Label children cached per subject: prom-client hashes the label object on every call otherwise,
  // which showed up in the rpc benchmark's profile.
  private readonly rpcChildren = new Map<
    string,
    { count: { inc(): void }; duration: { observe(v: number): void } }
  >();

  recordRpc(subject: string, outcome: string, seconds: number): void {
    const key = `${subject}\u0000${outcome}`;
    let child = this.rpcChildren.get(key);
    if (!child) {
      child = {
        count: this.rpcRequests.labels(subject, outcome),
        duration: this.rpcDuration.labels(subject),
      };
      this.rpcChildren.set(key, child);
    }
    child.count.inc();
    child.duration.observe(seconds);
  }
}
