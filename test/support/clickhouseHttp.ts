/** ClickHouse's HTTP interface over chDB lives with the benchmarks (`statusgrid bench soak` runs it as its own process too). */
export * from "../../bench/clickhouseHttp.ts"
