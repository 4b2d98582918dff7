#!/usr/bin/env node
'use strict'
// Sets one version everywhere a release needs it, in one step:
//
//   npm run version:bump -- 0.2.0
//
// - package.json and package-lock.json: `version`;
// - npm/<platform>/package.json: `version`.
//
// The published root pins the platform packages at exactly this version in its
// `optionalDependencies`; scripts/pin-platform-packages.js writes them at publish time (why not
// earlier is said there).
//
// The generated loader (index.js) embeds the version for its check; `npm run build` regenerates
// it, and the script says so at the end. Cargo.toml keeps its own version: the crate is not
// published, and nothing reads it at run time.

const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const NPM_DIR = path.join(ROOT, 'npm')

// Semantic Versioning 2.0.0, section by section: three numeric identifiers without leading
// zeros, an optional pre-release (dot-separated; numeric parts without leading zeros) and
// optional build metadata (dot-separated, any alphanumerics and hyphens).
const NUMERIC = '(?:0|[1-9][0-9]*)'
const PRERELEASE_PART = `(?:${NUMERIC}|[0-9]*[A-Za-z-][0-9A-Za-z-]*)`
const BUILD_PART = '[0-9A-Za-z-]+'
const SEMVER = new RegExp(
  `^${NUMERIC}\\.${NUMERIC}\\.${NUMERIC}` +
    `(?:-${PRERELEASE_PART}(?:\\.${PRERELEASE_PART})*)?` +
    `(?:\\+${BUILD_PART}(?:\\.${BUILD_PART})*)?$`,
)

function fail(message) {
  console.error(`version-bump: ${message}`)
  process.exit(1)
}

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'))
}

/** Writes `value` as npm does: two-space indent and a final newline, key order kept. */
function writeJson(file, value) {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`)
}

/** The platform packages, from the folders `napi create-npm-dirs` made, sorted by name. */
function platformPackages() {
  if (!fs.existsSync(NPM_DIR)) fail(`no ${path.relative(ROOT, NPM_DIR)}/ folder: run \`npx napi create-npm-dirs\` first`)
  return fs
    .readdirSync(NPM_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => {
      const file = path.join(NPM_DIR, entry.name, 'package.json')
      if (!fs.existsSync(file)) fail(`${path.relative(ROOT, file)} is missing`)
      return { file, manifest: readJson(file) }
    })
    .sort((a, b) => a.manifest.name.localeCompare(b.manifest.name))
}

function main() {
  const args = process.argv.slice(2)
  if (args.length !== 1) fail('usage: npm run version:bump -- <version>   (e.g. 0.2.0 or 0.2.0-rc.1)')
  // Accept a leading "v" as a courtesy: tags are spelled v0.2.0, package versions are not.
  const version = args[0].replace(/^v/, '')
  if (!SEMVER.test(version)) {
    fail(
      `"${args[0]}" is not a valid semantic version: expected MAJOR.MINOR.PATCH with no leading ` +
        'zeros, optionally followed by -prerelease and +build (e.g. 0.2.0, 1.0.0-rc.1).',
    )
  }

  const rootFile = path.join(ROOT, 'package.json')
  const root = readJson(rootFile)
  const previous = root.version
  const platforms = platformPackages()
  const prefix = `${root.name}-`

  for (const { manifest } of platforms) {
    if (!manifest.name.startsWith(prefix)) {
      fail(`npm/ holds ${manifest.name}, which is not a ${prefix}<platform> package`)
    }
  }

  for (const platform of platforms) {
    platform.manifest.version = version
    writeJson(platform.file, platform.manifest)
  }

  root.version = version
  writeJson(rootFile, root)

  const lockFile = path.join(ROOT, 'package-lock.json')
  if (fs.existsSync(lockFile)) {
    const lock = readJson(lockFile)
    lock.version = version
    lock.packages[''].version = version
    writeJson(lockFile, lock)
  }

  const files = ['package.json', 'package-lock.json', ...platforms.map((p) => path.relative(ROOT, p.file))]
  console.log(`version-bump: ${previous} -> ${version} in ${files.length} files:`)
  for (const file of files) console.log(`  ${file}`)
  console.log('Next: `npm run build` to regenerate index.js (its version check embeds the version), then commit.')
}

main()
