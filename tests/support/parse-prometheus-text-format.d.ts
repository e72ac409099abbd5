// Types for parse-prometheus-text-format (the package ships none).
declare module 'parse-prometheus-text-format' {
  type Labels = Record<string, string>;
  type Sample =
    | { value: string; labels?: Labels }
    | { buckets: Record<string, string>; count: string; sum: string; labels?: Labels }
    | { quantiles: Record<string, string>; count: string; sum: string; labels?: Labels };
  interface Family {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: Sample[];
  }
  export default function parsePrometheusTextFormat(text: string): Family[];
}
