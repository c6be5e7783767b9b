/** The Prometheus text-format reader the benchmarks use (bench/prometheus.ts), for the tests. */
export * from "../../bench/prometheus.ts"
