// Preloaded into a CLI run (`node --require`) by cli.spec.ts: kills the process with SIGKILL at
// the point of finishing a run that BATCHTOK_TEST_STOP_AT names, as a kill -9 or a power cut
// would stop it there.
//   before-rename-1, after-rename-1, after-rename-2: around the renames of the output files
//   before-checkpoint-removal: once every output file is in place
const fs = require('node:fs')

const stopAt = process.env.BATCHTOK_TEST_STOP_AT
const stop = () => process.kill(process.pid, 'SIGKILL')
const isCheckpoint = (file) => String(file).endsWith('.checkpoint.json')

let renames = 0
const renameSync = fs.renameSync
fs.renameSync = function (from, to) {
  if (isCheckpoint(to)) return renameSync.apply(this, arguments)
  if (stopAt === `before-rename-${renames + 1}`) stop()
  const result = renameSync.apply(this, arguments)
  renames++
  if (stopAt === `after-rename-${renames}`) stop()
  return result
}

const rmSync = fs.rmSync
fs.rmSync = function (file) {
  if (stopAt === 'before-checkpoint-removal' && isCheckpoint(file)) stop()
  return rmSync.apply(this, arguments)
}
