// Copy the OP-stack contracts the devnet's L2 deploys out of the pinned npm package
// @eth-optimism/contracts-bedrock (package.json) into the bundled artifacts:
//
//   node contracts/optimism.mjs [--out DIR]      (default: contracts/artifacts/optimism)
//
// Each artifact keeps what the devnet and the tests read (abi, bytecode, deployedBytecode,
// storageLayout) and names its package, version, source and compiler; the bytecode is the
// package's own (compiled by the OP stack's forge build), not rebuilt here.
import fs from "node:fs";
import path from "node:path";

export const CONTRACTS = [
  "AnchorStateRegistry", "DelayedWETH", "DisputeGameFactory", "FaultDisputeGame",
  "L2ToL1MessagePasser", "OptimismPortal2", "Proxy", "ProxyAdmin", "SuperchainConfig",
];
const PACKAGE = "@eth-optimism/contracts-bedrock";

const args = process.argv.slice(2);
let outDir = path.join("contracts", "artifacts", "optimism");
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--out") outDir = args[++i];
  else { console.error("usage: node contracts/optimism.mjs [--out DIR]"); process.exit(64); }
}
const root = path.join("node_modules", ...PACKAGE.split("/"));
const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
fs.mkdirSync(outDir, { recursive: true });
for (const name of CONTRACTS) {
  const file = path.join(root, "forge-artifacts", `${name}.sol`, `${name}.json`);
  const forge = JSON.parse(fs.readFileSync(file, "utf8"));
  const [sourceName] = Object.keys(forge.metadata.settings.compilationTarget);
  const artifact = {
    contractName: name,
    sourceName,
    package: `${PACKAGE}@${version}`,
    compiler: { version: forge.metadata.compiler.version,
                evmVersion: forge.metadata.settings.evmVersion,
                optimizer: forge.metadata.settings.optimizer },
    abi: forge.abi,
    bytecode: forge.bytecode.object,
    deployedBytecode: forge.deployedBytecode.object,
    storageLayout: forge.storageLayout,
  };
  fs.writeFileSync(path.join(outDir, `${name}.json`), JSON.stringify(artifact, null, 1) + "\n");
}
