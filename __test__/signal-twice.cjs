// Preloaded into a CLI run (`node --require`) by cli.spec.ts: once the run has written its first
// batch, it gets the signal BATCHTOK_TEST_SIGNAL twice in a row, as a command run by npx gets a
// terminal's Ctrl-C (from the terminal, and from npm passing it on).
const fs = require('node:fs')

const signal = process.env.BATCHTOK_TEST_SIGNAL
let sent = false
const write = fs.write
fs.write = function () {
  const callback = arguments[arguments.length - 1]
  arguments[arguments.length - 1] = function () {
    if (!sent) {
      sent = true
      process.kill(process.pid, signal)
      process.kill(process.pid, signal)
    }
    return callback.apply(this, arguments)
  }
  return write.apply(this, arguments)
}
