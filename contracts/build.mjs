// Compile Solidity sources with the pinned solc-js and write one artifact per contract.
//
//   node contracts/build.mjs [--out DIR] [--standard-json FILE] [--via-ir] SRC_DIR_OR_FILE ...
//
// Every .sol file found under the given directories is compiled in ONE standard-JSON job
// (so imports between them resolve), with fixed settings so the output is reproducible.
// Each contract gets DIR/<ContractName>.json holding abi, bytecode, deployedBytecode,
// storageLayout and the compiler version and settings. --standard-json also writes the
// whole solc standard-JSON output (what `recompute layout import` accepts).
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const solc = require("solc");

const args = process.argv.slice(2);
let outDir = null;
let stdJsonOut = null;
let viaIR = false;
const inputs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--out") outDir = args[++i];
  else if (args[i] === "--standard-json") stdJsonOut = args[++i];
  else if (args[i] === "--via-ir") viaIR = true;
  else inputs.push(args[i]);
}
if (inputs.length === 0) {
  console.error("usage: node contracts/build.mjs [--out DIR] [--standard-json FILE] [--via-ir] SRC ...");
  process.exit(64);
}

function collect(p, acc) {
  const st = fs.statSync(p);
  if (st.isDirectory()) {
    for (const name of fs.readdirSync(p).sort()) collect(path.join(p, name), acc);
  } else if (p.endsWith(".sol")) {
    acc.push(p);
  }
  return acc;
}
const files = inputs.flatMap((p) => collect(p, [])).sort();
const sources = {};
for (const f of files) {
  const key = path.relative(process.cwd(), f).split(path.sep).join("/");
  sources[key] = { content: fs.readFileSync(f, "utf8") };
}

const settings = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "cancun",
  viaIR,
  metadata: { bytecodeHash: "none", appendCBOR: false },
  outputSelection: {
    "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object", "storageLayout"] },
  },
};
const input = { language: "Solidity", sources, settings };

function findImports(importPath) {
  for (const base of [process.cwd(), path.join(process.cwd(), "node_modules")]) {
    const candidate = path.join(base, importPath);
    if (fs.existsSync(candidate)) return { contents: fs.readFileSync(candidate, "utf8") };
  }
  return { error: `not found: ${importPath}` };
}

const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
let failed = false;
for (const err of output.errors || []) {
  console.error(err.formattedMessage || err.message);
  if (err.severity === "error") failed = true;
}
if (failed) process.exit(1);

if (stdJsonOut) fs.writeFileSync(stdJsonOut, JSON.stringify(output, null, 1) + "\n");
if (outDir) {
  fs.mkdirSync(outDir, { recursive: true });
  for (const [source, contracts] of Object.entries(output.contracts || {})) {
    for (const [name, c] of Object.entries(contracts)) {
      const artifact = {
        contractName: name,
        sourceName: source,
        compiler: { version: solc.version(), settings: { ...settings, outputSelection: undefined } },
        abi: c.abi,
        bytecode: "0x" + c.evm.bytecode.object,
        deployedBytecode: "0x" + c.evm.deployedBytecode.object,
        storageLayout: c.storageLayout,
      };
      fs.writeFileSync(path.join(outDir, `${name}.json`), JSON.stringify(artifact, null, 1) + "\n");
    }
  }
}
