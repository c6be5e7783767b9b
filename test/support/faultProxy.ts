/** The TCP fault proxy lives with the benchmarks (`statusgrid bench soak` cuts stores with it too). */
export * from "../../bench/faultProxy.ts"
