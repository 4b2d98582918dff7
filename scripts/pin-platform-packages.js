#!/usr/bin/env node
'use strict'
// Writes the root package's `optionalDependencies` for publishing: every `batchtok-<platform>`
// package under npm/, at exactly the root's version.
//
//   node scripts/pin-platform-packages.js [package-dir]     (default: the repository root)
//
// The published root lists them so that npm installs the one binary that fits the user's
// platform. The repository's own package.json does not: until a release has published them, npm
// cannot resolve them, and every `npm install` would drop them from the lock file, which `npm ci`
// then refuses. So the release workflow and scripts/verify-install.sh run this on the manifest
// they are about to pack. Exact versions: with NAPI_RS_ENFORCE_VERSION_CHECK the loader refuses a
// binary of another release, so a range would only defer the failure.

const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const target = path.resolve(process.argv[2] || ROOT)
const manifestFile = path.join(target, 'package.json')
const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'))

const optional = {}
for (const entry of fs.readdirSync(path.join(ROOT, 'npm'), { withFileTypes: true })) {
  if (!entry.isDirectory()) continue
  const platform = JSON.parse(fs.readFileSync(path.join(ROOT, 'npm', entry.name, 'package.json'), 'utf8'))
  if (platform.version !== manifest.version) {
    console.error(
      `pin-platform-packages: ${platform.name} is at ${platform.version}, the root at ${manifest.version}; ` +
        `run npm run version:bump -- ${manifest.version}`,
    )
    process.exit(1)
  }
  optional[platform.name] = manifest.version
}
manifest.optionalDependencies = Object.fromEntries(Object.entries(optional).sort(([a], [b]) => a.localeCompare(b)))
fs.writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`)
console.log(`pinned ${Object.keys(optional).length} platform packages at ${manifest.version} in ${manifestFile}`)
