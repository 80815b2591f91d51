// The first thing every npm script runs: on a Node.js too old for the project (it runs TypeScript
// directly, and its dependencies need these versions), stop with one line saying what to do.
// Plain JavaScript that even very old Node versions parse, so the line is always printed. The same
// range is package.json's `engines` (and .npmrc's engine-strict stops `npm install` with it).
var parts = process.versions.node.split(".").map(Number);
var major = parts[0];
var minor = parts[1];
var patch = parts[2];
var supported =
  (major === 22 && (minor > 22 || (minor === 22 && patch >= 2))) ||
  (major === 24 && minor >= 15) ||
  major >= 25;
if (!supported) {
  console.error(
    "Promptmint needs Node.js 24.15+ (or 22.22.2+), not v" +
      process.versions.node +
      ": run `nvm install` or `fnm use` here (.nvmrc), or get Node 24 LTS from https://nodejs.org",
  );
  process.exit(1);
}
