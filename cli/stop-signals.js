'use strict'
// Ctrl-C (SIGINT) and a scheduler's stop (SIGTERM: Kubernetes deleting a pod, Slurm's scancel or
// time limit, both with a grace period before SIGKILL) as a request to stop at the next batch
// written, with a checkpoint of everything written so far, so the same command resumes from
// there. A later signal stops the process at once, as Node does by default.

/** The exit code of a run stopped by each signal: 128 + its number, as a shell reports it. */
const EXIT_CODES = { SIGINT: 130, SIGTERM: 143 }

/**
 * Signals this soon after the first are the same request: a terminal sends Ctrl-C's SIGINT to
 * every process in the foreground group, and a runner in it (npm, npx, yarn) passes the signal it
 * got on to its command too, so one keypress can arrive twice.
 */
const REPEAT_WINDOW_MS = 1000

/** A run stopped at a signal, after writing its checkpoint. */
class StoppedError extends Error {
  constructor(signal, message) {
    super(message)
    this.name = 'StoppedError'
    this.exitCode = EXIT_CODES[signal]
  }
}

/**
 * Listens for SIGINT and SIGTERM until `dispose()`. The first sets `signal` (its name) and
 * prints what happens next on `stream`; one more, from `REPEAT_WINDOW_MS` on, stops the process.
 * @param {NodeJS.WritableStream} [stream]
 * @returns {{ signal: string | null, dispose(): void }}
 */
function watchStopSignals(stream = process.stderr) {
  const handlers = {}
  let firstAt = 0
  const watch = {
    signal: null,
    dispose() {
      for (const [signal, handler] of Object.entries(handlers)) process.off(signal, handler)
    },
  }
  for (const signal of Object.keys(EXIT_CODES)) {
    handlers[signal] = () => {
      if (watch.signal !== null) {
        if (Date.now() - firstAt < REPEAT_WINDOW_MS) return
        // With no listener left, Node takes the signal's default action: the process ends.
        watch.dispose()
        process.kill(process.pid, signal)
        return
      }
      watch.signal = signal
      firstAt = Date.now()
      stream.write(`\nbatchtok: ${signal}: stopping after the batch being written, with a checkpoint (another signal, a second from now, stops at once)\n`)
    }
    process.on(signal, handlers[signal])
  }
  return watch
}

module.exports = { watchStopSignals, StoppedError }
