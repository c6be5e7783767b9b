/* Deterministic pseudo-randomness for the synthetic catalog, the simulator and the demo: the same seed gives the same sources on every run. */

/** A small deterministic PRNG (mulberry32), so generated sources are the same on every run. */
export const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** FNV-1a: a stable 32-bit hash, for ids and seeds derived from keys. */
export const fnv1a = (s: string): number => {
  let h = 2166136261
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619)
  return h >>> 0
}
