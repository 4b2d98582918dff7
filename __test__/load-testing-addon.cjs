// The addon built with the `testing` cargo feature (`npm run build:testing`, which `npm run test:js`
// runs first): the regular addon plus hooks that exist only for tests and the boundary benchmark
// (`__panicInBatch`, `__panicSync`, `__profileBoundary`). The release build has none of them.
const fs = require('node:fs')
const path = require('node:path')

const dir = path.join(__dirname, '..', '.cache', 'testing')
const file = fs.existsSync(dir) && fs.readdirSync(dir).find((name) => name.endsWith('.node'))
if (!file) {
  throw new Error(`no testing build of the addon in ${dir}; run \`npm run build:testing\` first`)
}
module.exports = require(path.join(dir, file))
