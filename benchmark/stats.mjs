// Small statistics shared by the runner and the report.

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export const MiB = 2 ** 20

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
