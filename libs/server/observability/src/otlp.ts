import type { MetricObjectWithValues, MetricValue, Registry } from 'prom-client';

type Attr = { key: string; value: { stringValue: string } };

function attributes(labels: Record<string, string | number | undefined>, drop?: string): Attr[] {
  return Object.entries(labels)
    .filter(([k, v]) => k !== drop && v !== undefined)
    .map(([key, v]) => ({ key, value: { stringValue: String(v) } }));
}

function labelKey(labels: Record<string, string | number | undefined>): string {
  return JSON.stringify(
    Object.entries(labels)
      .filter(([k]) => k !== 'le')
      .sort(),
  );
}

/**
 * prom-client's registry as an OTLP/HTTP JSON metrics request: counters become monotonic
 * cumulative sums, gauges gauges, histograms cumulative explicit-bucket histograms (prom-client's
 * cumulative `le` buckets turned into per-bucket counts). Summaries are left out.
 */
export function toOtlp(
  metrics: MetricObjectWithValues<MetricValue<string>>[],
  service: string,
  nowMs = Date.now(),
): Record<string, unknown> {
  const timeUnixNano = `${BigInt(nowMs) * 1_000_000n}`;
  const out: Record<string, unknown>[] = [];
  for (const m of metrics) {
    const base = { name: m.name, description: m.help };
    const type = String(m.type);
    if (type === 'counter') {
      out.push({
        ...base,
        sum: {
          aggregationTemporality: 2,
          isMonotonic: true,
          dataPoints: m.values.map((v) => ({
            attributes: attributes(v.labels),
            asDouble: v.value,
            timeUnixNano,
          })),
        },
      });
    } else if (type === 'gauge') {
      out.push({
        ...base,
        gauge: {
          dataPoints: m.values.map((v) => ({
            attributes: attributes(v.labels),
            asDouble: v.value,
            timeUnixNano,
          })),
        },
      });
    } else if (type === 'histogram') {
      const series = new Map<
        string,
        {
          labels: MetricValue<string>['labels'];
          buckets: Array<[number, number]>;
          sum: number;
          count: number;
        }
      >();
      for (const v of m.values) {
        const key = labelKey(v.labels);
        const s = series.get(key) ?? { labels: v.labels, buckets: [], sum: 0, count: 0 };
        series.set(key, s);
        const name = (v as { metricName?: string }).metricName ?? '';
        if (name.endsWith('_bucket')) {
          const le = v.labels['le'];
          s.buckets.push([le === '+Inf' ? Infinity : Number(le), v.value]);
        } else if (name.endsWith('_sum')) s.sum = v.value;
        else if (name.endsWith('_count')) s.count = v.value;
      }
      out.push({
        ...base,
        histogram: {
          aggregationTemporality: 2,
          dataPoints: [...series.values()].map((s) => {
            const sorted = s.buckets.sort((a, b) => a[0] - b[0]);
            const counts = sorted.map(([, c], i) => c - (i > 0 ? (sorted[i - 1] as [number, number])[1] : 0));
            return {
              attributes: attributes(s.labels, 'le'),
              count: String(s.count),
              sum: s.sum,
              bucketCounts: counts.map(String),
              explicitBounds: sorted.filter(([le]) => le !== Infinity).map(([le]) => le),
              timeUnixNano,
            };
          }),
        },
      });
    }
  }
  return {
    resourceMetrics: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: `switchyard-${service}` } }] },
        scopeMetrics: [{ scope: { name: 'switchyard' }, metrics: out }],
      },
    ],
  };
}

/**
 * Pushes the registry to an OTLP/HTTP collector (`<endpoint>/v1/metrics`, JSON) every `intervalMs`,
 * as OTEL_EXPORTER_OTLP_ENDPOINT asks; a failed push is reported and the next one tried. Returns the
 * stop function (which pushes once more).
 */
export function startOtlpPush(
  registry: Registry,
  opts: { endpoint: string; service: string; intervalMs: number; onError?: (err: Error) => void },
): () => Promise<void> {
  const url = `${opts.endpoint.replace(/\/+$/, '')}/v1/metrics`;
  const push = async () => {
    try {
      const body = JSON.stringify(toOtlp(await registry.getMetricsAsJSON(), opts.service));
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) throw new Error(`the collector answered HTTP ${res.status}`);
    } catch (err) {
      opts.onError?.(err as Error);
    }
  };
  const timer = setInterval(() => void push(), opts.intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await push();
  };
}
