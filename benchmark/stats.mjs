// Small statistics shared by the runner and the report.

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export const MiB = 2 ** 20

/**
 * A function that returns `0, 1, …, n - 1` in a new order on each call, the same orders on every
 * run (a seeded generator): interleaved benchmark rounds in these orders let every step follow
 * every other about equally often, where a rotation would always put the same step after another.
 */
export function shuffledOrders(n, seed = 1) {
  let state = seed >>> 0
  const random = () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
  return () => {
    const order = [...Array(n).keys()]
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[order[i], order[j]] = [order[j], order[i]]
    }
    return order
  }
}

/**
 * Throughput figures from per-batch times in milliseconds: median, and the range the fastest and
 * slowest samples give.
 */
export function throughput(samplesMs, bytes, tokens) {
  const mid = median(samplesMs)
  const fastest = Math.min(...samplesMs)
  const slowest = Math.max(...samplesMs)
  const perSecond = (amount, ms) => amount / (ms / 1000)
  return {
    samples: samplesMs.length,
    medianMs: mid,
    mibPerSec: perSecond(bytes / MiB, mid),
    mibPerSecMin: perSecond(bytes / MiB, slowest),
    mibPerSecMax: perSecond(bytes / MiB, fastest),
    tokensPerSec: perSecond(tokens, mid),
    tokensPerSecMin: perSecond(tokens, slowest),
    tokensPerSecMax: perSecond(tokens, fastest),
  }
}
