/**
 * Runs teardown steps in order, each given `capMs`: a step that takes longer is
 * named on stderr and left behind (the next steps still run), one that takes
 * over 10 s or fails is named too. A hanging close is reported with its name
 * instead of timing out the test's hook with no trace.
 */
export const tearDown = async (
  steps: ReadonlyArray<readonly [name: string, step: () => unknown]>,
  capMs = 40_000
): Promise<void> => {
  for (const [name, step] of steps) {
    const started = Date.now()
    let timer: NodeJS.Timeout | undefined
    const outcome = await Promise.race([
      Promise.resolve().then(step).then(() => "done" as const, (error: unknown) => ({ error })),
      new Promise<"hung">((done) => (timer = setTimeout(() => done("hung"), capMs)))
    ])
    clearTimeout(timer)
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    if (outcome === "hung") process.stderr.write(`[test] teardown "${name}" had not finished after ${seconds} s; left behind\n`)
    else if (outcome !== "done") process.stderr.write(`[test] teardown "${name}" failed after ${seconds} s: ${String(outcome.error)}\n`)
    else if (Date.now() - started > 10_000) process.stderr.write(`[test] teardown "${name}" took ${seconds} s\n`)
  }
}
